import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  type DefinitionNode,
  type GraphQLError,
  Kind,
  type OperationDefinitionNode,
  parse,
  validate,
} from 'graphql';
import { checkCatalogue } from '../../src/catalogue.ts';
import { ConfigError, configVariables, loadConfig } from '../../src/config/config.ts';
import { buildGraphqlSchema } from '../../src/edge/graphql/schema.ts';
import { Ffmpeg } from '../../src/engines/media/ffmpeg.ts';
import { builtinEngines } from '../../src/engines/registry.ts';
import { createRemoteDeps } from '../../src/engines/remote/create-remote-deps.ts';
import { type DocExample, docExamples, exampleFileText } from '../helpers/doc-examples.ts';

// Issue 33: the examples on the documentation pages work. What needs no server is checked
// here, each block named by page and line: GraphQL against the served schema, model
// definitions through the real configuration loader and engine binding, the environment
// variables of shell lines through the loader, embedded scripts against their examples/ file.
// test/integration/docs-examples.test.ts runs the shell blocks and the scripts.

const schema = buildGraphqlSchema();
const ffmpeg = Ffmpeg.resolve();
const engines = builtinEngines(
  ffmpeg,
  createRemoteDeps({ secrets: new Map(), ffmpeg, observe: () => {} }),
);
const cwd = mkdtempSync(path.join(tmpdir(), 'atelier-doc-examples-'));

/** Each operation of a GraphQL block validated alone (a block lists operations to send one by one). */
export function graphqlProblems(code: string, firstLine: number): string[] {
  const at = (error: GraphQLError) =>
    `line ${firstLine + (error.locations?.[0]?.line ?? 0)}: ${error.message}`;
  let definitions: readonly DefinitionNode[];
  try {
    definitions = parse(code).definitions;
  } catch (error) {
    return [at(error as GraphQLError)];
  }
  const fragments = definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION);
  const operations = definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  if (operations.length === 0) return ['no operation'];
  return operations.flatMap((operation) =>
    validate(schema, { kind: Kind.DOCUMENT, definitions: [operation, ...fragments] }).map(at),
  );
}

/** Keys of `given` (outside engineOptions, which its engine checks) that `loaded` dropped. */
function droppedKeys(given: unknown, loaded: unknown, at: string): string[] {
  if (typeof given !== 'object' || given === null) return [];
  if (Array.isArray(given)) {
    return given.flatMap((item, i) =>
      droppedKeys(item, Array.isArray(loaded) ? loaded[i] : undefined, `${at}[${i}]`),
    );
  }
  const kept = (loaded ?? {}) as Record<string, unknown>;
  return Object.entries(given).flatMap(([key, value]) => {
    if (!(key in kept)) return [`${at}.${key}: not a setting (renamed or misspelt?)`];
    return key === 'engineOptions' ? [] : droppedKeys(value, kept[key], `${at}.${key}`);
  });
}

/** What the configuration loader and the engines find wrong in a block of model definitions. */
export function modelProblems(code: string): string[] {
  let given: unknown;
  try {
    // The documented placeholder of a Replicate version, filled as a reader fills it.
    given = JSON.parse(code.replaceAll('<64-hex version id>', 'f'.repeat(64)));
  } catch (error) {
    return [`not JSON: ${(error as Error).message}`];
  }
  // A whole CONFIG_FILE (an object of settings) holds its models under MODELS.
  const models = Array.isArray(given)
    ? given
    : given !== null && typeof given === 'object' && 'MODELS' in given
      ? (given as { MODELS: unknown }).MODELS
      : [given];
  // The credentials a model names must be set for the loader to accept it; any value does.
  const credentials = Object.fromEntries(
    [...code.matchAll(/"apiKeyEnv":\s*"([A-Z0-9_]+)"/g)].map((m) => [m[1]!, 'a-key']),
  );
  try {
    const config = loadConfig({ env: { MODELS: JSON.stringify(models), ...credentials }, cwd });
    return [
      ...checkCatalogue(config.models, engines).problems,
      ...droppedKeys(models, config.models, 'MODELS'),
    ];
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
}

/** Variables set by a shell line that are not the configuration's, yet are documented. */
const otherVariables = new Set([
  'ATELIER_URL', // examples/
  'ATELIER_API_KEY', // examples/
  'MODEL_ID', // examples/
  'FIRST_ATELIER_KEY', // the apiKeyEnv of examples/second-atelier.json (docs/recipe-chaining.md)
  'ID_TOKEN', // a shell variable of docs/authentication.md
  'TEST_DATABASE_URL', // the tests and benchmarks
  'TEST_REDIS_URL',
]);

/**
 * What the configuration loader finds wrong in the `NAME=value` settings each command line of a
 * shell block starts with. A value from the shell (`$PWD/…`) is not checked, only its name.
 */
export function shellSettingProblems(code: string): string[] {
  const problems: string[] = [];
  for (const line of code.replace(/\\\n/g, ' ').split('\n')) {
    const settings = /^\s*(?:export\s+)?((?:[A-Z][A-Z0-9_]*=\S*\s+)+)/.exec(`${line} `)?.[1];
    if (settings === undefined) continue;
    const env: Record<string, string> = {};
    for (const [, name, value] of settings.matchAll(/([A-Z][A-Z0-9_]*)=(\S*)/g)) {
      // Not settings, but a model's apiKeyEnv may name one: the loader reads it.
      if (otherVariables.has(name!)) env[name!] = value!;
      else if (!configVariables.includes(name!)) problems.push(`${name}: not a setting`);
      else if (!value!.includes('$')) env[name!] = value!;
    }
    // A CONFIG_FILE the page names is one of the repository's (examples/…).
    if (env.CONFIG_FILE !== undefined && !path.isAbsolute(env.CONFIG_FILE)) {
      env.CONFIG_FILE = fileURLToPath(new URL(`../../${env.CONFIG_FILE}`, import.meta.url));
    }
    try {
      loadConfig({ env, cwd });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
    }
  }
  return problems;
}

function check({ block, example, where }: DocExample): void {
  const wrong = (problems: string[]) =>
    assert.deepEqual(problems, [], `${where} (${example.kind}):\n  ${problems.join('\n  ')}`);
  switch (example.kind) {
    case 'unclassified':
      assert.fail(`${where}: ${example.problem}`);
      break;
    case 'graphql':
      wrong(graphqlProblems(block.code, block.line));
      return;
    case 'models':
      wrong(modelProblems(block.code));
      return;
    case 'answer':
      assert.doesNotThrow(() => JSON.parse(block.code), `${where}: an answer is JSON`);
      return;
    case 'shell':
    case 'not run':
      if (block.lang === 'sh') wrong(shellSettingProblems(block.code));
      return;
    case 'example file': {
      const text = exampleFileText(example.file);
      assert.ok(text !== null, `${where}: ${example.file} does not exist`);
      assert.ok(
        text === block.code,
        `${where}: the block differs from ${example.file}; embed the file verbatim`,
      );
      return;
    }
    case 'text':
    case 'printed by npm start':
      return;
  }
}

describe('the examples of README.md and docs/, checked without a server', () => {
  const examples = docExamples();
  it('finds the blocks of every page', () => {
    assert.ok(examples.length > 40, `${examples.length} blocks`);
  });
  for (const example of examples) {
    const { block, example: kind, where } = example;
    const how = kind.kind === 'not run' ? `not run, ${kind.reason}` : kind.kind;
    it(`${where} (${block.lang ?? 'no language'}): ${how}`, () => check(example));
  }
});

describe('what the checks of documentation examples catch', () => {
  it('a renamed GraphQL field, with its line on the page', () => {
    assert.deepEqual(graphqlProblems('{ listModels { nodes { modelId } } }', 10), []);
    assert.deepEqual(graphqlProblems('# two\n{ listModels { nodes { modelID } } }', 10), [
      'line 12: Cannot query field "modelID" on type "Model". Did you mean "modelId"?',
    ]);
  });

  it('a renamed or unknown model setting, and JSON that is not JSON', () => {
    const model = {
      modelId: 'mdl_doc',
      name: 'Doc',
      kind: 'image',
      engine: 'procedural-image',
      capabilities: { sizes: [{ width: 64, height: 64, aspectRatio: '1:1', maxCount: 1 }] },
      pricing: { unit: 'image', credits: 1 },
    };
    const formats = { ...model.capabilities, formats: ['png'] };
    assert.deepEqual(modelProblems(JSON.stringify({ ...model, capabilities: formats })), []);
    assert.deepEqual(
      modelProblems(JSON.stringify({ ...model, capabilities: formats, maxRunSecond: 60 })),
      ['MODELS[0].maxRunSecond: not a setting (renamed or misspelt?)'],
    );
    assert.match(modelProblems(JSON.stringify(model)).join('\n'), /formats/);
    assert.match(modelProblems('"backends": []').join('\n'), /^not JSON/);
  });

  it('a misspelt or invalid setting on a shell line, not a shell variable', () => {
    assert.deepEqual(
      shellSettingProblems('DATA_DIR=/tmp/x OAUTH_CIMD_DEV_CA=$PWD/ca.pem npm start'),
      [],
    );
    assert.deepEqual(shellSettingProblems('export ATELIER_URL=http://localhost:8080'), []);
    assert.deepEqual(shellSettingProblems('DATABASE_URI=postgres://db/x npm start'), [
      'DATABASE_URI: not a setting',
    ]);
    assert.match(shellSettingProblems('PORT=eighty npm start').join('\n'), /^PORT: /);
  });
});
