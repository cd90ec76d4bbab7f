import type { ClientRegistry } from '../clients.ts';
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
 * sent to; until they pass, every error is shown, never redirected.
 */
export async function validateAuthorizationRequest(
  params: AuthorizeParams,
  deps: { clients: ClientRegistry; resource: string; scope: string },
): Promise<AuthorizationRequest> {
  const ctx: AuthorizeContext = { params, resource: deps.resource, scope: deps.scope };
  await checkClient(ctx, deps.clients);
  checkRedirectUri(ctx);
  checkResponseTypeAndState(ctx);
  checkScope(ctx);
  checkResource(ctx);
  checkPkce(ctx);
  return {
    client: ctx.client!,
    redirectUri: params.redirect_uri!,
    state: params.state!,
    scope: params.scope!,
    resource: params.resource!,
    codeChallenge: params.code_challenge!,
  };
}
