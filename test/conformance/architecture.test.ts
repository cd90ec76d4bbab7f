import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

const srcDir = new URL('../../src/', import.meta.url).pathname;

interface Import {
  file: string;
  /** Top folder of the importing file under src/ ('edge', 'services', …; 'main.ts' at the root). */
  from: string;
  /** Top folder of a relative import, or the package name. */
  to: string;
  relative: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const from = path.relative(srcDir, file).split(path.sep)[0]!;
  const specifiers = [...text.matchAll(/(?:from|import)\s+'([^']+)'/g)].map((m) => m[1]!);
  return specifiers.map((spec) => {
    if (!spec.startsWith('.')) {
      const name = spec.startsWith('@')
        ? spec.split('/').slice(0, 2).join('/')
        : spec.split('/')[0]!;
      return { file, from, to: name, relative: false };
    }
    const target = path.relative(srcDir, path.resolve(path.dirname(file), spec));
    return { file, from, to: target.split(path.sep)[0]!, relative: true };
  });
}

const all = sourceFiles(srcDir).flatMap(importsOf);
const wireLibraries = [
  'fastify',
  'fastify-plugin',
  'mercurius',
  'graphql',
  'graphql-ws',
  '@pothos/core',
  '@modelcontextprotocol/sdk',
];

function violations(rule: (i: Import) => boolean): string[] {
  return all.filter(rule).map((i) => `${path.relative(srcDir, i.file)} → ${i.to}`);
}

describe('imports go one way (STYLE.md)', () => {
  it('edge/ never imports store/, engines/ or jobs/', () => {
    assert.deepEqual(
      violations(
        (i) => i.from === 'edge' && i.relative && ['store', 'engines', 'jobs'].includes(i.to),
      ),
      [],
    );
  });

  it('services/, auth/, jobs/ and engines/ never import a wire protocol library', () => {
    assert.deepEqual(
      violations(
        (i) =>
          ['services', 'auth', 'jobs', 'engines'].includes(i.from) && wireLibraries.includes(i.to),
      ),
      [],
    );
  });

  it('services/ never imports jobs/ or edge/', () => {
    assert.deepEqual(
      violations((i) => i.from === 'services' && i.relative && ['jobs', 'edge'].includes(i.to)),
      [],
    );
  });

  it('engines/ imports only domain/ and shared/', () => {
    assert.deepEqual(
      violations(
        (i) =>
          i.from === 'engines' && i.relative && !['engines', 'domain', 'shared'].includes(i.to),
      ),
      [],
    );
  });

  it('domain/ and shared/ stay leaves', () => {
    assert.deepEqual(
      violations((i) => i.from === 'domain' && i.relative && !['domain', 'shared'].includes(i.to)),
      [],
    );
    assert.deepEqual(
      violations((i) => i.from === 'shared' && i.relative && i.to !== 'shared'),
      [],
    );
  });

  it('store/ never reaches up into services/, auth/ or edge/', () => {
    assert.deepEqual(
      violations(
        (i) =>
          i.from === 'store' && i.relative && ['services', 'auth', 'edge', 'jobs'].includes(i.to),
      ),
      [],
    );
  });

  it('no `export *` barrels', () => {
    const barrels = sourceFiles(srcDir).filter((f) =>
      /^export \* from/m.test(readFileSync(f, 'utf8')),
    );
    assert.deepEqual(barrels, []);
  });

  it('only config/ and the process entry points read process.env', () => {
    const readers = sourceFiles(srcDir)
      .filter((f) => /process\.env/.test(readFileSync(f, 'utf8')))
      .map((f) => path.relative(srcDir, f))
      .filter((f) => !f.startsWith('config/') && f !== 'main.ts' && !f.startsWith('cli/'));
    assert.deepEqual(readers, []);
  });

  it('the rules above see the imports (the scan itself works)', () => {
    assert.ok(all.some((i) => i.from === 'edge' && i.to === 'services'));
    assert.ok(all.some((i) => i.from === 'services' && i.to === 'store'));
  });
});
