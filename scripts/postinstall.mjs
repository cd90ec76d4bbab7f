// npm's postinstall, in plain JavaScript so that any Node can run it: on a Node that runs
// Atelier (>= 22.18, which runs TypeScript) it runs scripts/postinstall.ts; on an older one it
// says what to install instead of failing `npm install` with a stack trace. Never fails an
// install: what it makes, a start makes too.
import { spawnSync } from 'node:child_process';
import { howToGetNode, isSupportedNode } from './supported-node.mjs';

if (isSupportedNode()) {
  spawnSync(process.execPath, [new URL('postinstall.ts', import.meta.url).pathname], {
    stdio: 'inherit',
  });
} else {
  process.stderr.write(
    `${howToGetNode()}(\`npm start\` will not run on this Node; run \`npm ci\` again after installing.)\n`,
  );
}
