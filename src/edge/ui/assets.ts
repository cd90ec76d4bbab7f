import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import { sendAppError } from '../http/error-reply.ts';

const here = new URL('./assets/', import.meta.url);
const require = createRequire(import.meta.url);
const javascript = 'text/javascript; charset=utf-8';

/** Where uPlot keeps its browser files (its package.json names the CommonJS build as main). */
const uplot = path.dirname(require.resolve('uplot'));

/**
 * Served files, read once at start: the pages' scripts (every .js and .css of assets/; the
 * console's ES modules import one another by relative URL under /assets/) and style, and three libraries as their packages ship
 * them for browsers (oauth4webapi's ES module, graphql-ws's UMD build, which sets
 * `globalThis.graphqlWs`, and uPlot's ES module and stylesheet for the console's charts). No
 * build step: what is in the repository is what the browser runs.
 */
const assets: Record<string, { type: string; body: string }> = {
  ...ownAssets(),
  'oauth4webapi.js': {
    type: javascript,
    body: readFileSync(require.resolve('oauth4webapi'), 'utf8'),
  },
  'graphql-ws.js': {
    type: javascript,
    body: readFileSync(
      path.join(path.dirname(require.resolve('graphql-ws')), '..', 'umd', 'graphql-ws.min.js'),
      'utf8',
    ),
  },
  'uplot.js': { type: javascript, body: readFileSync(path.join(uplot, 'uPlot.esm.js'), 'utf8') },
  'uplot.css': {
    type: 'text/css; charset=utf-8',
    body: readFileSync(path.join(uplot, 'uPlot.min.css'), 'utf8'),
  },
};

/** Every script and stylesheet of `assets/`, by its file name. */
function ownAssets(): Record<string, { type: string; body: string }> {
  const types: Record<string, string> = { '.js': javascript, '.css': 'text/css; charset=utf-8' };
  const found: Record<string, { type: string; body: string }> = {};
  for (const name of readdirSync(here)) {
    const type = types[path.extname(name)];
    if (type !== undefined) found[name] = { type, body: readFileSync(new URL(name, here), 'utf8') };
  }
  return found;
}

/** The icon every browser asks a site for: a 32-pixel PNG in an ICO (a palette, 700 bytes). */
const favicon = readFileSync(new URL('favicon.ico', here));

/** `/assets/:name`: the files above, cacheable for five minutes; `/favicon.ico`. */
export async function assetRoutes(app: FastifyInstance) {
  app.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
    // Own entries only: `constructor` or `__proto__` are names an object inherits, not files.
    const { name } = request.params;
    const asset = Object.hasOwn(assets, name) ? assets[name] : undefined;
    if (asset === undefined)
      return sendAppError(request, reply, new AppError(ErrorCode.NotFound, 'No such asset.'));
    return reply
      .header('content-type', asset.type)
      .header('cache-control', 'public, max-age=300')
      .send(asset.body);
  });
  app.get('/favicon.ico', async (_request, reply) =>
    reply
      .header('content-type', 'image/x-icon')
      .header('cache-control', 'public, max-age=86400')
      .send(favicon),
  );
}
