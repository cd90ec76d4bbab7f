import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

const root = new URL('../../', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

const files = [...sourceFiles('src'), ...sourceFiles('test')];
const table = 'src/domain/finish-code.ts';

describe('one way to finish a task (issue 16)', () => {
  it('the store finish is called only by the TaskFinisher', () => {
    const callers = sourceFiles('src').filter(
      (file) =>
        file !== 'src/services/task-finisher.ts' &&
        file !== 'src/store/task-queue.store.ts' &&
        /\b(?:finishTask|finishOkThenClaim)\b/.test(readFileSync(path.join(root, file), 'utf8')),
    );
    assert.deepEqual(callers, []);
  });

  it('finish codes are named constants outside their table', () => {
    // A finish code written as a number, in TypeScript or in SQL.
    const literal =
      /\b(?:finishCode|failCode|finish_code|code)\b['"]?\s*(?:[:=,]|===|!==|<>|'<>',)\s*[0-5]\b(?!\.)/;
    const found = files
      .filter((file) => file !== table && file !== 'test/conformance/finish-path.test.ts')
      .flatMap((file) =>
        readFileSync(path.join(root, file), 'utf8')
          .split('\n')
          .map((line, i) => ({ line, at: `${file}:${i + 1}` }))
          .filter(({ line }) => /finish|failCode/i.test(line) && literal.test(line))
          .map(({ at, line }) => `${at}: ${line.trim()}`),
      );
    assert.deepEqual(found, []);
  });
});
