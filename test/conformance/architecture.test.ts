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
  // Static imports, and dynamic ones (`import('…')`), which go the same one way.
  const specifiers = [...text.matchAll(/(?:from\s+|import\s+|import\()'([^']+)'/g)].map(
    (m) => m[1]!,
  );
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

/**
 * Which folder of src/ may import which (besides itself): the house's import directions as an
 * allow-list. Every folder (and root file) of src/ has a row, so a new folder fails the test
 * below until it is placed here.
 *
 * Type-only imports follow the same table. A type is still a dependency — the importing folder
 * changes when the owner does — and the one shared shape that crossed a line (an element
 * picture, a signed URL) belongs in domain/ anyway, so no wider rule is needed.
 */
const mayImport: Readonly<Record<string, readonly string[]>> = {
  'main.ts': ['app.ts', 'core.ts', 'config', 'services', 'shared'],
  'app.ts': ['core.ts', 'config', 'edge', 'rate-limits', 'services', 'shared'],
  // The catalogue bound to the engines: what start and every reload check (catalogue.ts).
  'catalogue.ts': ['config', 'domain', 'engines', 'shared'],
  // The composition root constructs every concrete thing; edge/ only for its Services type.
  'core.ts': [
    'catalogue.ts',
    'auth',
    'config',
    'domain',
    'edge',
    'engines',
    'events',
    'jobs',
    'observability',
    'services',
    'shared',
    'storage',
    'store',
  ],
  cli: ['core.ts', 'main.ts', 'config', 'shared', 'store'],
  config: ['domain', 'shared'],
  shared: [],
  domain: ['shared'],
  // config/ for the settings of what it starts (tracing-sdk.ts takes TracingConfig), as
  // storage/ takes its S3Config.
  observability: ['config', 'domain', 'shared'],
  store: ['config', 'domain', 'shared'],
  storage: ['config', 'domain', 'shared'],
  events: ['domain', 'shared', 'store'],
  'rate-limits': ['config', 'shared', 'store'],
  engines: ['domain', 'shared'],
  auth: ['config', 'domain', 'events', 'shared', 'store'],
  services: ['auth', 'domain', 'events', 'observability', 'shared', 'storage', 'store'],
  // The runner finishes every task through the one TaskFinisher (a use case of services/);
  // services/ never import jobs/, so the direction still holds.
  jobs: ['domain', 'engines', 'events', 'observability', 'services', 'shared', 'storage', 'store'],
  edge: ['auth', 'config', 'domain', 'observability', 'rate-limits', 'services', 'shared'],
};

/**
 * Folders inside the rows above: each shares its top folder's row (STYLE.md layers the top
 * folders; inside one, its files may use each other). Listed so that a new one, too, is placed
 * on purpose rather than slipping in.
 */
const subfolders = [
  'auth/oauth',
  'auth/oauth/authorize',
  'domain/kinds',
  'edge/graphql',
  'edge/graphql/schema',
  'edge/http',
  'edge/mcp',
  'edge/mcp/tools',
  'edge/oauth',
  'edge/openai',
  'edge/ui',
  'edge/ui/assets',
  'edge/ws',
  'engines/comfyui',
  'engines/fake',
  'engines/media',
  'engines/openai',
  'engines/procedural-image',
  'engines/remote',
  'engines/replicate',
  'engines/speech',
  'engines/video',
  'store/migrations',
];

function violations(rule: (i: Import) => boolean): string[] {
  return all.filter(rule).map((i) => `${path.relative(srcDir, i.file)} → ${i.to}`);
}

describe('imports go one way (STYLE.md)', () => {
  it('every folder and root file of src/ has a row in the allow-list', () => {
    const entries = readdirSync(srcDir, { withFileTypes: true })
      .filter((e) => e.isDirectory() || e.name.endsWith('.ts'))
      .map((e) => e.name)
      .sort();
    assert.deepEqual(entries, Object.keys(mayImport).sort());
    const nested = readdirSync(srcDir, { withFileTypes: true, recursive: true })
      .filter((e) => e.isDirectory())
      .map((e) => path.relative(srcDir, path.join(e.parentPath, e.name)))
      .filter((dir) => dir.includes(path.sep))
      .sort();
    assert.deepEqual(nested, [...subfolders].sort());
  });

  it('each folder imports only itself and the folders its row allows', () => {
    assert.deepEqual(
      violations((i) => i.relative && i.to !== i.from && !(mayImport[i.from] ?? []).includes(i.to)),
      [],
    );
  });

  it('services/, auth/, jobs/, engines/ and rate-limits/ never import a wire protocol library', () => {
    assert.deepEqual(
      violations(
        (i) =>
          ['services', 'auth', 'jobs', 'engines', 'rate-limits'].includes(i.from) &&
          wireLibraries.includes(i.to),
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

  it('time comes from the clock port: no Date.now() or new Date() outside shared/clock.ts', () => {
    // SQL `now()` stays where the comparison is in SQL too (one clock per comparison).
    const readers = sourceFiles(srcDir)
      .filter((f) => /Date\.now\(\)|new Date\(\)/.test(readFileSync(f, 'utf8')))
      .map((f) => path.relative(srcDir, f))
      .filter((f) => f !== 'shared/clock.ts');
    assert.deepEqual(readers, []);
  });

  it('the rules above see the imports (the scan itself works)', () => {
    assert.ok(all.some((i) => i.from === 'edge' && i.to === 'services'));
    assert.ok(all.some((i) => i.from === 'services' && i.to === 'store'));
  });
});
