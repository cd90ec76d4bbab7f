import { OAuthError } from '../oauth-error.ts';
import { redirectUriMatches } from '../redirect-uri.ts';
import type { AuthorizeContext } from './authorization-request.ts';

/** redirect_uri is one the client registered (spec §4.3 matching rules). Not redirectable. */
export function checkRedirectUri(ctx: AuthorizeContext): void {
  const uri = ctx.params.redirect_uri;
  if (uri === undefined || uri === '')
    throw new OAuthError('invalid_request', 'redirect_uri is required.', false);
  if (!redirectUriMatches(ctx.client!.redirectUris, uri)) {
    throw new OAuthError(
      'invalid_request',
      'redirect_uri is not registered for this client.',
      false,
    );
  }
}
