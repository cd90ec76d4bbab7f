import { AppError, ErrorCode } from '../shared/errors.ts';
import type { Db } from '../store/database.ts';
import { createAccountForIdentity, findIdentityAccount } from '../store/identity.store.ts';
import { type AuthResult, activeAccount, type IdTokenAuthenticator } from './authenticate.ts';
import { lookUpCredential } from './credentials-unavailable.ts';
import type { IdTokenVerifier, VerifiedIdentity } from './id-token-verifier.ts';

/**
 * `X-IdP-Token` (and the WebSocket `idpToken`): a verified ID token's (issuer, subject) maps
 * to one account; a first sign-in opens one when configured to. An invalid token is refused
 * with 100101 before execution (HTTP 401); unreachable keys or database give 100102 for
 * protected fields. Never throws for a credential's sake.
 */
export class OidcIdTokenAuthenticator implements IdTokenAuthenticator {
  readonly #db: Db;
  readonly #verifier: IdTokenVerifier;
  readonly #createAccounts: boolean;

  constructor(deps: { db: Db; verifier: IdTokenVerifier; createAccounts: boolean }) {
    this.#db = deps.db;
    this.#verifier = deps.verifier;
    this.#createAccounts = deps.createAccounts;
  }

  async authenticate(idToken: string): Promise<AuthResult> {
    try {
      const identity = await this.#verifier.verify(idToken);
      const accountId = await lookUpCredential(() => this.#accountOf(identity));
      if (accountId === undefined) {
        return {
          kind: 'refused',
          error: new AppError(ErrorCode.Unauthenticated, 'No account is linked to this identity.'),
          rejectRequest: false,
        };
      }
      return await activeAccount(this.#db, accountId, {
        kind: 'id_token',
        issuer: identity.issuer,
        subject: identity.subject,
      });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // An invalid token is refused before execution like an invalid API key (HTTP 401);
      // unreachable keys or database are not the token's fault, so public fields still answer.
      return { kind: 'refused', error, rejectRequest: error.code === ErrorCode.Unauthenticated };
    }
  }

  async #accountOf(identity: VerifiedIdentity): Promise<string | undefined> {
    const linked = await findIdentityAccount(this.#db, identity.issuer, identity.subject);
    if (linked !== undefined || !this.#createAccounts) return linked;
    try {
      return await createAccountForIdentity(this.#db, identity);
    } catch (error) {
      const raced = await findIdentityAccount(this.#db, identity.issuer, identity.subject);
      if (raced === undefined) throw error;
      return raced;
    }
  }
}
