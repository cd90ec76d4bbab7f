/** RFC 6749 error codes, plus RFC 8707's invalid_target. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'server_error';

/**
 * An OAuth protocol error. `redirectable` is false when the client or its redirect URI is not
 * trusted: then the error is shown to the person and never sent to a redirect URI (RFC 6749
 * §4.1.2.1, RFC 9700 §4.11). `status` is the HTTP status when it is shown or answered
 * directly: 403 for a forged or foreign request, 404 for a pending request this browser does
 * not have.
 */
export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  readonly error: OAuthErrorCode;
  readonly redirectable: boolean;
  readonly status: 400 | 403 | 404;
  /** What the operator's log may say beyond the description (never shown). */
  readonly detail: string | undefined;

  constructor(
    error: OAuthErrorCode,
    description: string,
    redirectable = true,
    status: 400 | 403 | 404 = 400,
    detail?: string,
  ) {
    super(description);
    this.error = error;
    this.redirectable = redirectable;
    this.status = status;
    this.detail = detail;
  }

  /** The same error, to be shown on Atelier's own page instead of sent to a redirect URI. */
  shown(): OAuthError {
    return this.redirectable
      ? new OAuthError(this.error, this.message, false, this.status, this.detail)
      : this;
  }
}
