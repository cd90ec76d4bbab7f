import type { AuthResult } from '../../auth/authenticate.ts';
import type { Actor } from '../../domain/actor.ts';
import { AppError, ErrorCode } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import type { Services } from '../services.ts';

/** What every resolver receives. The actor is explicit; there is no ambient current user. */
export interface GraphqlContext {
  readonly auth: AuthResult;
  readonly requestId: string;
  readonly services: Services;
  /** The request's logger: every line carries its request id. */
  readonly log: Logger;
}

/**
 * The caller of a protected field. Public fields of the same selection keep working when this
 * throws, because root fields are nullable (spec §4.1 rule 4).
 */
export function requireActor(ctx: GraphqlContext): Actor {
  switch (ctx.auth.kind) {
    case 'actor':
      return ctx.auth.actor;
    case 'refused':
      throw ctx.auth.error;
    case 'anonymous':
      throw new AppError(
        ErrorCode.Unauthenticated,
        'Authentication required: send Authorization: Bearer <API key> or X-IdP-Token: <ID token>.',
      );
  }
}

/** The caller if one is authenticated, for public reads that answer more to an account. */
export function optionalActor(ctx: GraphqlContext): Actor | null {
  return ctx.auth.kind === 'actor' ? ctx.auth.actor : null;
}
