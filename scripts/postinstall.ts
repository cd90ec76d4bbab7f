// What `npm install` runs after installing (postinstall), so that the first `npm start` of a
// fresh clone starts as fast as a restart: it fills Node's compile cache with Atelier's
// modules (as bin/atelier uses it) and makes the embedded database's data-directory template
// (scripts/pglite-template.ts). Either is made by a start that lacks it; this never fails an
// install.
import { spawnSync } from 'node:child_process';
import { enableCompileCache, flushCompileCache } from 'node:module';

enableCompileCache();
try {
  await import('../src/cli/main.ts');
  await import('../src/main.ts');
  flushCompileCache();
} catch {
  // Not all of the source is here (the Dockerfile's dependency stage): nothing to cache.
}
spawnSync(process.execPath, [new URL('pglite-template.ts', import.meta.url).pathname], {
  stdio: 'inherit',
});
