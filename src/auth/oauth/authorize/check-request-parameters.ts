import { OAuthError } from '../oauth-error.ts';
import type { AuthorizeContext } from './authorization-request.ts';

/** response_type=code and a state, both required (spec §4.3). */
export function checkResponseTypeAndState(ctx: AuthorizeContext): void {
  const { response_type: responseType, state } = ctx.params;
  if (responseType === undefined)
    throw new OAuthError('invalid_request', 'response_type is required.');
  if (responseType !== 'code')
    throw new OAuthError('unsupported_response_type', 'Only response_type=code.');
  if (state === undefined || state === '')
    throw new OAuthError('invalid_request', 'state is required.');
}

/**
 * scope is exactly the one scope offered. Missing, unknown or more: RFC 6749 §3.3's
 * invalid_scope (the server has no default scope to fall back on).
 */
export function checkScope(ctx: AuthorizeContext): void {
  const scope = ctx.params.scope;
  if (scope === undefined || scope === '')
    throw new OAuthError('invalid_scope', `scope is required: ${ctx.scope}.`);
  if (scope !== ctx.scope) throw new OAuthError('invalid_scope', `scope must be ${ctx.scope}.`);
}

/** resource is the exact MCP resource URI: missing or another, RFC 8707's invalid_target. */
export function checkResource(ctx: AuthorizeContext): void {
  const resource = ctx.params.resource;
  if (resource === undefined || resource !== ctx.resource)
    throw new OAuthError('invalid_target', `resource must be ${ctx.resource}.`);
}

/** PKCE with S256 only: a base64url SHA-256 of the verifier, no padding (43 characters). */
export function checkPkce(ctx: AuthorizeContext): void {
  const { code_challenge: challenge, code_challenge_method: method } = ctx.params;
  if (challenge === undefined || method === undefined) {
    throw new OAuthError(
      'invalid_request',
      'PKCE is required: code_challenge and code_challenge_method=S256.',
    );
  }
  if (method !== 'S256')
    throw new OAuthError('invalid_request', 'Only code_challenge_method=S256.');
  if (!/^[A-Za-z0-9_-]{43}$/.test(challenge))
    throw new OAuthError('invalid_request', 'code_challenge is not a base64url SHA-256.');
}
