import assert from 'node:assert/strict';
import { it } from 'node:test';
import { submissionsIn } from '../../src/edge/graphql/submissions.ts';

it('counts the generate* root fields of the operation that runs, by response key', () => {
  const cases: Array<[string, string | null, number]> = [
    ['{ listModels { nodes { modelId } } }', null, 0],
    [
      'mutation { a: generateImage(input: $i) { contentId } b: generateVideo(input: $v) { contentId } }',
      null,
      2,
    ],
    // The same field twice with one key is merged by GraphQL: it runs once.
    [
      'mutation { generateImage(input: $i) { contentId } generateImage(input: $i) { taskId } }',
      null,
      1,
    ],
    [
      'mutation { ...F ... on Mutation { c: generateSpeech(input: $s) { contentId } } } fragment F on Mutation { a: generateImage(input: $i) { contentId } }',
      null,
      2,
    ],
    // Only the operation named runs; a fragment cycle (a validation error) does not hang.
    ['query Q { __typename } mutation M { a: generateImage(input: $i) { contentId } }', 'Q', 0],
    [
      'mutation M { ...F } fragment F on Mutation { a: generateImage(input: $i) { contentId } ...F }',
      'M',
      1,
    ],
    ['mutation { generate', null, 0],
  ];
  for (const [source, operationName, expected] of cases)
    assert.equal(submissionsIn(source, operationName), expected, source);
});
