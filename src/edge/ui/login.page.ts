import type { FastifyInstance } from 'fastify';
import type { IdentityConfig } from '../../config/config.ts';
import { escapeHtml, pageShell, sendPage } from './html.ts';

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
    <p><a href="/" id="to-console">Open your console</a></p>
    <button id="sign-out" type="button" class="secondary">Sign out</button>
  </section>
</main>
</body>`,
  );
}
