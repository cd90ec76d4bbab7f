import { errors, type JWTVerifyGetKey, jwtVerify } from 'jose';
import type { Clock } from '../shared/clock.ts';
import { AppError, ErrorCode } from '../shared/errors.ts';
import { identityUnavailable } from './issuer-keys.ts';

/** Who an ID token says the caller is. */
export interface VerifiedIdentity {
  readonly issuer: string;
  readonly subject: string;
  readonly email: string | null;
}

export interface IdTokenVerifierOptions {
  issuer: string;
  audience: string;
  /** Asymmetric algorithms only: never `none`, never an HMAC keyed with a public key. */
  algorithms: readonly string[];
  keys: JWTVerifyGetKey;
  /**
   * The time `exp`, `iat` and `nbf` are judged at: the clock the built-in provider signs with,
   * so a token is never judged on another clock than the one that stamped it.
   */
  clock: Clock;
  /** Tolerated clock skew for `exp`, `iat` and `nbf`. */
  clockToleranceSeconds?: number;
}

/**
 * Verifies an ID token exactly the same way for the built-in and any external issuer:
 * signature by the issuer's keys with an allowed algorithm, `iss`, `aud`, `exp`, `iat`/`nbf`
 * with a small tolerance, and a subject. A bad token is 100101 with one generic message (the
 * failed check is the error's cause, for the log); keys that cannot be fetched are 100102
 * (the token may well be good).
 */
export class IdTokenVerifier {
  readonly #o: IdTokenVerifierOptions;

  constructor(options: IdTokenVerifierOptions) {
    this.#o = options;
  }

  get issuer(): string {
    return this.#o.issuer;
  }

  async verify(token: string): Promise<VerifiedIdentity> {
    try {
      const { payload } = await jwtVerify(token, this.#o.keys, {
        issuer: this.#o.issuer,
        audience: this.#o.audience,
        algorithms: [...this.#o.algorithms],
        clockTolerance: this.#o.clockToleranceSeconds ?? 30,
        currentDate: this.#o.clock.now(),
        requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
      });
      return {
        issuer: this.#o.issuer,
        subject: payload.sub!,
        email: typeof payload.email === 'string' ? payload.email : null,
      };
    } catch (error) {
      throw classify(error);
    }
  }
}

/** The one message for any ID token that fails a check (signature, issuer, audience, expiry…). */
export const invalidIdTokenMessage =
  'The ID token is not valid. Sign in again with the identity provider for a fresh one.';

function classify(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof errors.JOSEError) {
    // Which check failed helps an attacker probing tokens more than a client: it goes to
    // the log (as the cause), and the client gets one message for every bad token.
    return new AppError(
      ErrorCode.Unauthenticated,
      invalidIdTokenMessage,
      {},
      {
        cause: `ID token refused: ${describe(error)}`,
      },
    );
  }
  // jose judges tokens with JOSEErrors; anything else is unexpected, and not the token's fault.
  return identityUnavailable(error);
}

function describe(error: InstanceType<typeof errors.JOSEError>): string {
  if (error instanceof errors.JWTExpired) return 'expired';
  if (error instanceof errors.JWTClaimValidationFailed)
    return `claim "${error.claim}" ${error.reason}`;
  if (error instanceof errors.JOSEAlgNotAllowed) return 'algorithm not allowed';
  if (error instanceof errors.JWKSNoMatchingKey)
    return 'signed with a key the issuer does not publish';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'bad signature';
  return 'malformed';
}
