import { createHash } from 'node:crypto';
import { constantTimeEqual, sha256Hex } from '../../shared/secrets.ts';
import type { Db } from '../../store/database.ts';
import { redeemCode, revokeTokensOfCode } from '../../store/oauth.store.ts';
import { type AccessTokens, accessTokenLifetimeSeconds } from './access-tokens.ts';
import type { ClientRegistry } from './clients.ts';
import { OAuthError } from './oauth-error.ts';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

const required = [
  'grant_type',
  'client_id',
  'code',
  'redirect_uri',
  'code_verifier',
  'resource',
] as const;

/**
 * `POST /oauth/token` (spec §4.3): exchanges a single-use code for an access token. The code
 * is consumed first, atomically, so of any number of concurrent redemptions one can win; a
 * code presented again revokes what it was exchanged for (RFC 9700 §4.5). Every binding —
 * client, redirect URI (port included), PKCE verifier, resource — must match.
 */
export interface TokenEndpointDeps {
  db: Db;
  clients: ClientRegistry;
  tokens: AccessTokens;
  resource: string;
}

export class TokenEndpoint {
  readonly #deps: TokenEndpointDeps;

  constructor(deps: TokenEndpointDeps) {
    this.#deps = deps;
  }

  exchange(form: Readonly<Record<string, string>>): Promise<TokenResponse> {
    return exchangeCode(form, this.#deps);
  }
}

async function exchangeCode(
  form: Readonly<Record<string, string>>,
  deps: TokenEndpointDeps,
): Promise<TokenResponse> {
  const missing = required.filter((name) => form[name] === undefined || form[name] === '');
  if (missing.length > 0) throw new OAuthError('invalid_request', `Missing ${missing.join(', ')}.`);
  if (form.grant_type !== 'authorization_code') {
    throw new OAuthError('unsupported_grant_type', 'Only grant_type=authorization_code.');
  }
  await deps.clients.resolve(form.client_id!);
  const codeHash = sha256Hex(form.code!);
  const redeemed = await redeemCode(deps.db, codeHash);
  if (redeemed === undefined) throw new OAuthError('invalid_grant', 'Unknown code.');
  if (redeemed.replayed) {
    await revokeTokensOfCode(deps.db, codeHash);
    throw new OAuthError(
      'invalid_grant',
      'This code was already used; the tokens it gave are revoked.',
    );
  }
  const { code } = redeemed;
  if (code.expires_at.getTime() <= Date.now())
    throw new OAuthError('invalid_grant', 'The code expired.');
  if (code.client_id !== form.client_id)
    throw new OAuthError('invalid_grant', 'The code was issued to another client.');
  if (code.redirect_uri !== form.redirect_uri) {
    throw new OAuthError('invalid_grant', 'redirect_uri differs from the authorization request.');
  }
  if (!verifierMatches(form.code_verifier!, code.code_challenge)) {
    throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge.');
  }
  if (form.resource !== code.resource || form.resource !== deps.resource) {
    throw new OAuthError('invalid_target', 'resource differs from the authorization request.');
  }
  const accessToken = await deps.tokens.issue({
    accountId: code.account_id,
    clientId: code.client_id,
    scope: code.scope,
    codeHash,
  });
  return {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: accessTokenLifetimeSeconds,
    scope: code.scope,
  };
}

/** RFC 7636: a 43–128 character verifier whose S256 is the challenge. */
function verifierMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  return constantTimeEqual(createHash('sha256').update(verifier).digest('base64url'), challenge);
}
