import type { AccountRole, AccountStatus, Actor, Credential } from '../domain/actor.ts';
import { AppError, ErrorCode } from '../shared/errors.ts';
import { findAccount } from '../store/account.store.ts';
import type { Db } from '../store/database.ts';
import type { ApiKeyVerifier, VerifiedApiKey } from './api-key-verifier.ts';
import { lookUpCredential } from './credentials-unavailable.ts';

/** The credentials a GraphQL request (HTTP or WebSocket) may carry. */
export interface GraphqlCredentials {
  /** The raw `Authorization` header value. */
  authorization?: string | undefined;
  /** The raw `X-IdP-Token` header value (or `connection_init.payload.idpToken`). */
  idpToken?: string | undefined;
}

/**
 * What a request's credentials amount to:
 * - `anonymous`: none were sent; public fields work, protected ones fail with 100101;
 * - `actor`: an active account owns the call;
 * - `refused`: credentials were sent and are not good. When `rejectRequest` is set the edge
 *   answers before execution (an invalid API key: HTTP 401, spec §5.1 and §7 rule 2);
 *   otherwise protected fields fail with `error` and public fields still answer.
 */
export type AuthResult =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'actor'; readonly actor: Actor }
  | { readonly kind: 'refused'; readonly error: AppError; readonly rejectRequest: boolean };

export interface IdTokenAuthenticator {
  authenticate(idToken: string): Promise<AuthResult>;
}

export interface GraphqlAuthenticatorDeps {
  db: Db;
  apiKeys: ApiKeyVerifier;
  idTokens: IdTokenAuthenticator;
}

/**
 * Resolves GraphQL credentials to an {@link AuthResult}. An API key, when present, owns the
 * call even if an ID token for another account is also sent, and an invalid key is never
 * rescued by any other credential (spec §5.1 "Precedence", "Invalid key").
 */
export class GraphqlAuthenticator {
  readonly #deps: GraphqlAuthenticatorDeps;

  constructor(deps: GraphqlAuthenticatorDeps) {
    this.#deps = deps;
  }

  async authenticate(credentials: GraphqlCredentials): Promise<AuthResult> {
    if (credentials.authorization !== undefined) {
      return this.#withApiKey(credentials.authorization);
    }
    if (credentials.idpToken !== undefined && credentials.idpToken !== '') {
      return this.#deps.idTokens.authenticate(credentials.idpToken);
    }
    return { kind: 'anonymous' };
  }

  async #withApiKey(header: string): Promise<AuthResult> {
    const match = /^Bearer +(\S+) *$/i.exec(header);
    let verified: VerifiedApiKey | null;
    try {
      verified = match?.[1] === undefined ? null : await this.#deps.apiKeys.verify(match[1]);
    } catch (error) {
      // 100102: the key may well be good; public fields still answer.
      if (error instanceof AppError) return { kind: 'refused', error, rejectRequest: false };
      throw error;
    }
    if (verified === null) {
      return {
        kind: 'refused',
        error: new AppError(
          ErrorCode.Unauthenticated,
          'The API key is malformed, unknown, expired or revoked. Send Authorization: Bearer svc_… with a valid key.',
        ),
        rejectRequest: true,
      };
    }
    return accountOutcome(
      { id: verified.accountId, status: verified.accountStatus, role: verified.accountRole },
      { kind: 'api_key', apiKeyId: verified.apiKeyId },
    );
  }
}

/** Looks the account up, then {@link accountOutcome}; for credentials that carry no account state. */
export async function activeAccount(
  db: Db,
  accountId: string,
  credential: Credential,
): Promise<AuthResult> {
  return accountOutcome(await lookUpCredential(() => findAccount(db, accountId)), credential);
}

/**
 * Whether the account behind a verified credential may act: a deleted account gets 110206,
 * a suspended (or vanished) one 100101. The one place this rule lives, for every credential.
 */
export function accountOutcome(
  account: { id: string; status: AccountStatus; role: AccountRole } | undefined,
  credential: Credential,
): Exclude<AuthResult, { kind: 'anonymous' }> {
  if (account?.status === 'deleted') {
    return {
      kind: 'refused',
      error: new AppError(ErrorCode.AccountDeleted, 'This account has been deleted.'),
      rejectRequest: false,
    };
  }
  if (account === undefined || account.status !== 'active') {
    return {
      kind: 'refused',
      error: new AppError(ErrorCode.Unauthenticated, 'This account is suspended.'),
      rejectRequest: false,
    };
  }
  return { kind: 'actor', actor: { accountId: account.id, role: account.role, credential } };
}

/** The outcome with the request's address on its actor (the audit log's "from where"). */
export function withAddress(auth: AuthResult, address: string | undefined): AuthResult {
  if (auth.kind !== 'actor' || address === undefined) return auth;
  return { kind: 'actor', actor: { ...auth.actor, address } };
}
