import { createHash } from 'node:crypto';
import type { Clock } from '../../shared/clock.ts';
import { constantTimeEqual, sha256Hex } from '../../shared/secrets.ts';
import type { Db } from '../../store/database.ts';
import {
  lockCode,
  markCodeUsed,
  type OauthCodeRow,
  revokeTokensOfCode,
} from '../../store/oauth.store.ts';
import { lookUpCredential } from '../credentials-unavailable.ts';
import { type AccessTokens, accessTokenLifetimeSeconds } from './access-tokens.ts';
import type { ClientRegistry } from './clients.ts';
import { OAuthError } from './oauth-error.ts';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

/** The fields of a code exchange besides `grant_type` and `resource`, all required (spec §4.3). */
const required = ['client_id', 'code', 'redirect_uri', 'code_verifier'] as const;

export interface TokenEndpointDeps {
  db: Db;
  clients: ClientRegistry;
  tokens: AccessTokens;
  resource: string;
  clock: Clock;
}

/**
 * `POST /oauth/token` (spec §4.3): exchanges a single-use code for an access token.
 *
 * Only a request that proves it is the code's client — same `client_id`, `redirect_uri` (port
 * included) and a matching PKCE `code_verifier` — can touch the code: it consumes a fresh code,
 * or revokes what a used one gave (RFC 9700 §4.5). Anything else is `invalid_grant` and changes
 * nothing, so a code seen in a log cannot be used to end someone's session. The code row is
 * locked for the whole exchange and the token is stored in the same transaction: a replay
 * waits for the first redemption to commit and always finds (and revokes) its token.
 */
export class TokenEndpoint {
  readonly #deps: TokenEndpointDeps;

  constructor(deps: TokenEndpointDeps) {
    this.#deps = deps;
  }

  async exchange(form: Readonly<Record<string, string>>): Promise<TokenResponse> {
    checkRequest(form, this.#deps.resource);
    await this.#deps.clients.resolve(form.client_id!);
    const outcome = await lookUpCredential(() => this.#redeem(form));
    if (outcome.kind === 'refused') throw outcome.error;
    return {
      access_token: outcome.accessToken,
      token_type: 'Bearer',
      expires_in: accessTokenLifetimeSeconds,
      scope: outcome.scope,
    };
  }

  /** Refusals are returned, not thrown: a replay's revocation must commit, not roll back. */
  #redeem(
    form: Readonly<Record<string, string>>,
  ): Promise<
    { kind: 'issued'; accessToken: string; scope: string } | { kind: 'refused'; error: OAuthError }
  > {
    const { db, tokens, clock } = this.#deps;
    const codeHash = sha256Hex(form.code!);
    return db.transaction().execute(async (trx) => {
      const code = await lockCode(trx, codeHash);
      if (code === undefined) return refused('Unknown code.');
      const mismatch = bindingMismatch(code, form);
      if (mismatch !== null) return refused(mismatch);
      if (code.revoked_at !== null) {
        return refused(
          'The connection was revoked before this code was exchanged: the person withdrew access. Start the authorization again.',
        );
      }
      if (code.used_at !== null) {
        await revokeTokensOfCode(trx, codeHash);
        return refused('This code was already used; the tokens it gave are revoked.');
      }
      if (code.expires_at.getTime() <= clock.now().getTime()) return refused('The code expired.');
      await markCodeUsed(trx, codeHash);
      const accessToken = await tokens.issue(
        { accountId: code.account_id, clientId: code.client_id, scope: code.scope, codeHash },
        trx,
      );
      return { kind: 'issued', accessToken, scope: code.scope };
    });
  }
}

/**
 * What a request must say before any code is looked up: `grant_type` first (whatever else is
 * sent, another grant is `unsupported_grant_type`), then the one resource (RFC 8707
 * `invalid_target`, missing or not), then every other field.
 */
function checkRequest(form: Readonly<Record<string, string>>, resource: string): void {
  const given = (name: string) => form[name] !== undefined && form[name] !== '';
  if (!given('grant_type')) throw new OAuthError('invalid_request', 'grant_type is required.');
  if (form.grant_type !== 'authorization_code') {
    throw new OAuthError('unsupported_grant_type', 'Only grant_type=authorization_code.');
  }
  if (!given('resource')) throw new OAuthError('invalid_target', `resource must be ${resource}.`);
  if (form.resource !== resource)
    throw new OAuthError('invalid_target', `resource must be ${resource}.`);
  const missing = required.filter((name) => !given(name));
  if (missing.length > 0) throw new OAuthError('invalid_request', `Missing ${missing.join(', ')}.`);
}

/** Why the request is not from the code's own client, or null when every binding matches. */
function bindingMismatch(code: OauthCodeRow, form: Readonly<Record<string, string>>) {
  if (code.client_id !== form.client_id) return 'The code was issued to another client.';
  if (code.redirect_uri !== form.redirect_uri)
    return 'redirect_uri differs from the authorization request.';
  if (code.resource !== form.resource) return 'resource differs from the authorization request.';
  if (!verifierMatches(form.code_verifier!, code.code_challenge))
    return 'code_verifier does not match the code_challenge.';
  return null;
}

function refused(description: string) {
  return { kind: 'refused' as const, error: new OAuthError('invalid_grant', description) };
}

/** RFC 7636: a 43–128 character verifier whose S256 is the challenge. */
function verifierMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  return constantTimeEqual(createHash('sha256').update(verifier).digest('base64url'), challenge);
}
