import { AppError, ErrorCode } from '../shared/errors.ts';
import type { Db } from '../store/database.ts';
import { createAccountForIdentity, findIdentityAccount } from '../store/identity.store.ts';
import { type AuthResult, activeAccount, type IdTokenAuthenticator } from './authenticate.ts';
import type { IdTokenVerifier } from './id-token-verifier.ts';

/**
 * `X-IdP-Token` (and the WebSocket `idpToken`): a verified ID token's (issuer, subject) maps
 * to one account; a first sign-in opens one when configured to. An invalid token is refused
 * with 100101 before execution (HTTP 401); unreachable keys give 100102 for protected fields.
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
    let identity: Awaited<ReturnType<IdTokenVerifier['verify']>>;
    try {
      identity = await this.#verifier.verify(idToken);
    } catch (error) {
      // An invalid token is refused before execution like an invalid API key (HTTP 401);
      // unreachable keys are not the token's fault, so public fields still answer.
      if (error instanceof AppError)
        return { kind: 'refused', error, rejectRequest: error.code === ErrorCode.Unauthenticated };
      throw error;
    }
    const accountId = await this.#accountOf(identity);
    if (accountId === undefined) {
      return {
        kind: 'refused',
        error: new AppError(ErrorCode.Unauthenticated, 'No account is linked to this identity.'),
        rejectRequest: false,
      };
    }
    return activeAccount(this.#db, accountId, {
      kind: 'id_token',
      issuer: identity.issuer,
      subject: identity.subject,
    });
  }

  async #accountOf(identity: {
    issuer: string;
    subject: string;
    email: string | null;
  }): Promise<string | undefined> {
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
