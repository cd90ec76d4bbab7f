import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AppError, ErrorCode } from '../../src/shared/errors.ts';

const srcDir = new URL('../../src/', import.meta.url).pathname;
const catalogue = path.join(srcDir, 'shared', 'errors.ts');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

describe('the error catalogue is named, never restated', () => {
  it('no file under src/ but the catalogue spells a code as a string literal', () => {
    const codes = new Set<string>(Object.values(ErrorCode));
    const found = sourceFiles(srcDir)
      .filter((file) => file !== catalogue)
      .flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/(['"`])(\d{6})\1/g)]
          .filter((m) => codes.has(m[2]!))
          .map((m) => `${path.relative(srcDir, file)}: ${m[0]}`),
      );
    assert.deepEqual(found, [], 'use ErrorCode.<Name> from src/shared/errors.ts');
  });

  it('no HTTP route outside a protocol of its own writes an error status by hand', () => {
    // These answer in another protocol's vocabulary, with the statuses it names: RFC 6749 and
    // 6750 (OAuth, /auth/session), the MCP transport, GraphQL over HTTP. Every other route
    // answers an AppError with httpStatusOf (src/edge/http/error-status.ts) via sendAppError.
    const ownProtocol = new Set([
      'edge/oauth/oauth.routes.ts',
      'edge/mcp/mcp.route.ts',
      'edge/graphql/graphql.plugin.ts',
      'edge/http/text-input.plugin.ts',
    ]);
    const found = sourceFiles(path.join(srcDir, 'edge'))
      .map((file) => path.relative(srcDir, file))
      .filter((file) => !ownProtocol.has(file))
      .flatMap((file) =>
        [
          ...readFileSync(path.join(srcDir, file), 'utf8').matchAll(/\.code\(\s*([45]\d\d)\s*\)/g),
        ].map((m) => `${file}: ${m[0]}`),
      );
    assert.deepEqual(found, [], 'answer with sendAppError / httpStatusOf');
  });
});

describe('docs/errors.md is the catalogue for people (issue 33: every error code)', () => {
  const page = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  /** Each table row's code and its last column (retryable). */
  const rowsOf = (text: string) =>
    new Map(
      [...text.matchAll(/^\| `(\d{6})` \|.*\| ([^|]+) \|$/gm)].map((m) => [m[1]!, m[2]!.trim()]),
    );
  const rows = rowsOf(page);

  it('has a row for every code, and none for a code that is not one', () => {
    assert.deepEqual([...rows.keys()].sort(), Object.values(ErrorCode).sort());
  });

  it('says retryable exactly where the catalogue does', () => {
    for (const code of Object.values(ErrorCode)) {
      const retryable = new AppError(code, 'x').retryable;
      assert.equal(rows.get(code)?.startsWith('yes'), retryable, `${code}: "${rows.get(code)}"`);
    }
  });

  it('notices a row gone (the check itself works)', () => {
    const without = rowsOf(page.replace(/^\| `140004` \|.*$/m, ''));
    assert.notDeepEqual([...without.keys()].sort(), Object.values(ErrorCode).sort());
  });
});
