import { readFileSync } from 'node:fs';
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
 * Served files, read once at start: the pages' scripts (the console's ES modules import one
 * another by relative URL under /assets/) and style, and three libraries as their packages ship
 * them for browsers (oauth4webapi's ES module, graphql-ws's UMD build, which sets
 * `globalThis.graphqlWs`, and uPlot's ES module and stylesheet for the console's charts). No
 * build step: what is in the repository is what the browser runs.
 */
const assets: Record<string, { type: string; body: string }> = {
  'atelier.css': { type: 'text/css; charset=utf-8', body: own('atelier.css') },
  'login.js': { type: javascript, body: own('login.js') },
  'consent.js': { type: javascript, body: own('consent.js') },
  'console.js': { type: javascript, body: own('console.js') },
  'client.js': { type: javascript, body: own('client.js') },
  'dom.js': { type: javascript, body: own('dom.js') },
  'admin.js': { type: javascript, body: own('admin.js') },
  'admin-accounts.js': { type: javascript, body: own('admin-accounts.js') },
  'admin-audit.js': { type: javascript, body: own('admin-audit.js') },
  'usage.js': { type: javascript, body: own('usage.js') },
  'limits.js': { type: javascript, body: own('limits.js') },
  'webhooks.js': { type: javascript, body: own('webhooks.js') },
  'charts.js': { type: javascript, body: own('charts.js') },
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

function own(name: string): string {
  return readFileSync(new URL(name, here), 'utf8');
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
