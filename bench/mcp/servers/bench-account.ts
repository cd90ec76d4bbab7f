// The account every MCP benchmark server reads, and its MCP access token. The token comes from
// the authorization server's own steps — authorization request, sign-in of the browser
// session, consent (the MCP connection), code exchange with PKCE — called in process instead
// of through a browser, so it is stored and checked like any issued token.
import { createHash, randomBytes } from 'node:crypto';
import type { App } from '../../../src/app.ts';
import { csrfParameterName } from '../../../src/auth/oauth/authorization-flow.ts';
import type { Config } from '../../../src/config/config.ts';

/**
 * Opens the account `bench` (1,000 standard credits unless told) connected to
 * `atelier-local-tools`; with `apiKeyAccess`, it also gets an API key.
 */
export async function benchAccount(
  app: App,
  config: Config,
  options: { credits?: number; apiKeyAccess?: boolean } = {},
): Promise<{ token: string; apiKey?: string }> {
  const account = await app.services.accounts.create({
    alias: 'bench',
    credits: { standard: options.credits ?? 1000 },
    apiKeyAccess: options.apiKeyAccess ?? false,
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
  if (options.apiKeyAccess !== true) return { token };
  const key = await app.services.apiKeys.issue(account.id, { name: 'bench' });
  return { token, apiKey: key.secret };
}
