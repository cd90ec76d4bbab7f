import type { ClientRegistry } from '../clients.ts';
import { OAuthError } from '../oauth-error.ts';
import type {
  AuthorizationRequest,
  AuthorizeContext,
  AuthorizeParams,
} from './authorization-request.ts';
import { checkClient } from './check-client.ts';
import { checkRedirectUri } from './check-redirect-uri.ts';
import {
  checkPkce,
  checkResource,
  checkResponseTypeAndState,
  checkScope,
} from './check-request-parameters.ts';

/**
 * The checks of `GET /oauth/authorize`, in order. The first two establish whom an error may be
 * sent to; until they pass, every error is shown, never redirected. Even then only a client
 * this deployment configured gets its errors redirected: a Client ID Metadata Document names
 * redirect URIs chosen by whoever published it, so redirecting there before the person has
 * signed in and seen the consent page would make Atelier an open redirector (RFC 9700
 * §4.11.2).
 */
export async function validateAuthorizationRequest(
  params: AuthorizeParams,
  deps: { clients: ClientRegistry; resource: string; scope: string },
): Promise<AuthorizationRequest> {
  const ctx: AuthorizeContext = { params, resource: deps.resource, scope: deps.scope };
  await checkClient(ctx, deps.clients);
  checkRedirectUri(ctx);
  try {
    checkResponseTypeAndState(ctx);
    checkScope(ctx);
    checkResource(ctx);
    checkPkce(ctx);
  } catch (error) {
    if (error instanceof OAuthError && ctx.client!.source !== 'configured') throw error.shown();
    throw error;
  }
  return {
    client: ctx.client!,
    redirectUri: params.redirect_uri!,
    state: params.state!,
    scope: params.scope!,
    resource: params.resource!,
    codeChallenge: params.code_challenge!,
  };
}
