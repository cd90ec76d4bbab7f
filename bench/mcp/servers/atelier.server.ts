// Atelier itself, as `serve` builds it (PGlite in DATA_DIR, or PostgreSQL with DATABASE_URL),
// with one account connected to the built-in client `atelier-local-tools`; prints {url, token}.
// The token comes from the authorization server's own steps — authorization request, sign-in
// of the browser session, consent (the MCP connection), code exchange with PKCE — called in
// process instead of through a browser, so it is stored and checked like any issued token.
import { createHash, randomBytes } from 'node:crypto';
import { buildApp } from '../../../src/app.ts';
import { csrfParameterName } from '../../../src/auth/oauth/authorization-flow.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { keepWebAssemblyOnBaseline } from '../../../src/shared/wasm-tiering.ts';

keepWebAssemblyOnBaseline(); // as `bin/atelier serve` runs
const config = loadConfig({
  env: { ...process.env, LOG_LEVEL: 'silent', RATE_LIMIT_PER_WINDOW: '0' },
  cwd: process.cwd(),
});
const app = await buildApp(config);
const account = await app.services.accounts.create({
  alias: 'bench',
  credits: { standard: 1000 },
});

const clientId = 'atelier-local-tools';
const redirectUri = 'http://localhost/oauth/callback';
const scope = 'mcp:access';
const { resource } = config.oauth;
const verifier = randomBytes(32).toString('base64url');
const state = randomBytes(16).toString('base64url');
const { session } = await app.oauth.flow.begin(
  {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope,
    resource,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state,
  },
  null,
);
const signedIn = await app.oauth.sessions.signIn(session, account.id);
const callback = new URL(
  await app.oauth.flow.decide(signedIn, {
    [csrfParameterName]: signedIn.csrfToken,
    client_id: clientId,
    state,
    scope,
  }),
);
const code = callback.searchParams.get('code');
if (code === null) throw new Error(`consent gave no code: ${callback.href}`);
const { access_token: token } = await app.oauth.tokenEndpoint.exchange({
  grant_type: 'authorization_code',
  client_id: clientId,
  code,
  redirect_uri: redirectUri,
  code_verifier: verifier,
  resource,
});

const url = await app.http.listen({ host: '127.0.0.1', port: 0 });
console.log(JSON.stringify({ url, token }));
process.on('SIGTERM', () => {
  app.close().catch(() => process.exit(1));
});
