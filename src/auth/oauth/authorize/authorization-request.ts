import type { OAuthClient } from '../clients.ts';

/** The query of `GET /oauth/authorize`, each parameter given at most once. */
export type AuthorizeParams = Readonly<Record<string, string>>;

/** A request that passed every check: what the pending authorization remembers. */
export interface AuthorizationRequest {
  readonly client: OAuthClient;
  readonly redirectUri: string;
  readonly state: string;
  readonly scope: string;
  readonly resource: string;
  readonly codeChallenge: string;
}

export interface AuthorizeContext {
  readonly params: AuthorizeParams;
  /** The one resource URI tokens are issued for (`PUBLIC_URL/mcp`). */
  readonly resource: string;
  readonly scope: string;
  client?: OAuthClient;
}
