import type { ClientRegistry } from '../clients.ts';
import { OAuthError } from '../oauth-error.ts';
import type { AuthorizeContext } from './authorization-request.ts';

/** client_id names a configured client or an accepted metadata document. Not redirectable. */
export async function checkClient(ctx: AuthorizeContext, clients: ClientRegistry): Promise<void> {
  const clientId = ctx.params.client_id;
  if (clientId === undefined || clientId === '')
    throw new OAuthError('invalid_request', 'client_id is required.', false);
  ctx.client = await clients.resolve(clientId);
}
