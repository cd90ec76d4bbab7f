import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import type { IdentityConfig } from '../../config/config.ts';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import { sendAppError } from '../http/error-reply.ts';
import { escapeHtml, pageShell, sendPage } from './html.ts';

const here = new URL('./assets/', import.meta.url);
const require = createRequire(import.meta.url);
/** Served files, read once at start: the page's script and style, and oauth4webapi's ES module. */
const assets: Record<string, { type: string; body: string }> = {
  'login.js': {
    type: 'text/javascript; charset=utf-8',
    body: readFileSync(new URL('login.js', here), 'utf8'),
  },
  'atelier.css': {
    type: 'text/css; charset=utf-8',
    body: readFileSync(new URL('atelier.css', here), 'utf8'),
  },
  'consent.js': {
    type: 'text/javascript; charset=utf-8',
    body: readFileSync(new URL('consent.js', here), 'utf8'),
  },
  'oauth4webapi.js': {
    type: 'text/javascript; charset=utf-8',
    body: readFileSync(require.resolve('oauth4webapi'), 'utf8'),
  },
};

/**
 * `/login`: sign in with the configured identity provider and end up holding its ID token in
 * the browser — with the built-in provider by email and password, with an external issuer by
 * an OpenID Connect authorization-code flow with PKCE, as a public client whose redirect URI
 * is this page. The OAuth consent flow (MCP) continues from here.
 */
export async function loginPage(
  app: FastifyInstance,
  opts: { identity: IdentityConfig; publicUrl: string },
) {
  const { identity } = opts;
  const issuerOrigin = new URL(identity.issuer).origin;
  const connect = identity.builtin ? [] : [issuerOrigin];

  app.get('/login', async (_request, reply) => {
    const data = {
      mode: identity.builtin ? 'builtin' : 'oidc',
      issuer: identity.issuer,
      'client-id': identity.audience,
      'redirect-uri': `${opts.publicUrl}/login`,
      insecure: String(new URL(identity.issuer).protocol === 'http:'),
    };
    const attributes = Object.entries(data)
      .map(([name, value]) => `data-${name}="${escapeHtml(value)}"`)
      .join(' ');
    return sendPage(reply, page(attributes, identity), { connect });
  });

  app.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
    const asset = assets[request.params.name];
    if (asset === undefined)
      return sendAppError(request, reply, new AppError(ErrorCode.NotFound, 'No such asset.'));
    return reply
      .header('content-type', asset.type)
      .header('cache-control', 'public, max-age=300')
      .send(asset.body);
  });
}

function page(attributes: string, identity: IdentityConfig): string {
  const external = escapeHtml(new URL(identity.issuer).host);
  return pageShell(
    'Sign in',
    'login.js',
    `<body ${attributes}>
<main class="card">
  <h1>Atelier</h1>
  <section id="sign-in">
    <p>Sign in to continue.</p>
    ${
      identity.builtin
        ? `<form id="password-form" novalidate>
      <label>Email <input name="email" type="email" autocomplete="username" required></label>
      <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
      <button type="submit">Sign in</button>
    </form>`
        : `<button id="oidc-sign-in" type="button">Sign in with ${external}</button>`
    }
    <p id="message" role="alert" hidden></p>
  </section>
  <section id="signed-in" data-testid="signed-in" hidden>
    <p>Signed in as <strong id="who"></strong>.</p>
    <button id="sign-out" type="button" class="secondary">Sign out</button>
  </section>
</main>
</body>`,
  );
}
