import { type AppError, ErrorCode } from '../../shared/errors.ts';

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
  // An answer that waits for a generation (`/v1`): still running when the wait ended, as a
  // gateway's upstream that did not answer in time (RFC 9110 §15.6.5); finished without a
  // result, as an upstream that failed (§15.6.3).
  [ErrorCode.GenerationPending]: 504,
  [ErrorCode.GenerationFailed]: 502,
  [ErrorCode.Internal]: 500,
};

/**
 * The status of `error` on a route whose request body is the resource itself
 * (`PUT /uploads/:mediaId`), where RFC 9110 is more precise than a 120001's 400: bytes that
 * arrived whole but are refused are 422 (§15.5.21), and a PUT the resource's state no longer
 * allows (the upload is already complete) is 409 (§15.5.10).
 */
export function contentStatusOf(error: AppError): number {
  if (error.code !== ErrorCode.InvalidInput) return httpStatusOf[error.code];
  return error.details.state === 'ready' ? 409 : 422;
}
