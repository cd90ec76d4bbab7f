import { ErrorCode } from '../../shared/errors.ts';

/**
 * The HTTP status of each catalogue code, for every route that answers an AppError as such
 * (`{ "error": { code, message, retryable, requestId, … } }`). GraphQL answers its errors in
 * the body with 200 instead (spec §7 rule 1), except where it says otherwise.
 */
export const httpStatusOf: Readonly<Record<ErrorCode, number>> = {
  [ErrorCode.Unauthenticated]: 401,
  [ErrorCode.IdentityUnavailable]: 503,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.AccountDeleted]: 403,
  [ErrorCode.InvalidInput]: 400,
  [ErrorCode.UnsupportedCombination]: 400,
  [ErrorCode.IdempotencyConflict]: 409,
  [ErrorCode.InsufficientCredits]: 402,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.RateLimited]: 429,
  [ErrorCode.QueryTooLarge]: 400,
  [ErrorCode.Internal]: 500,
};
