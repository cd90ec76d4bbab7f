// npm's postinstall, in plain JavaScript so that any Node can run it: on a Node that runs
// Atelier (>= 22.18, which runs TypeScript) it runs scripts/postinstall.ts; on an older one it
// says what to install instead of failing `npm install` with a stack trace. Never fails an
// install: what it makes, a start makes too.
import { spawnSync } from 'node:child_process';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major > 22 || (major === 22 && minor >= 18)) {
  spawnSync(process.execPath, [new URL('postinstall.ts', import.meta.url).pathname], {
    stdio: 'inherit',
  });
} else {
  process.stderr.write(
    `Atelier runs on Node.js 22.18 or later (Node 24 LTS is tested); this is ${process.version}, ` +
      'so `npm start` will not run here. Install Node 24 (nvm: `nvm install 24`; or ' +
      '`npm install --no-save --prefix ~/.cache/node24 node@24` and put ' +
      '~/.cache/node24/node_modules/.bin first on PATH), then run `npm ci` again.\n',
  );
}
