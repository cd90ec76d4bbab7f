import type { Config } from '../../config/config.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Db } from '../../store/database.ts';
import type { OidcIdTokenAuthenticator } from '../id-token-authenticator.ts';
import { SigningKeys } from '../signing-keys.ts';
import { AccessTokens } from './access-tokens.ts';
import { AuthorizationFlow } from './authorization-flow.ts';
import { BrowserSessions } from './browser-sessions.ts';
import {
  ClientMetadataDocuments,
  type ClientMetadataOptions,
} from './client-metadata-documents.ts';
import { ClientRegistry } from './clients.ts';
import { TokenEndpoint } from './token-endpoint.ts';

/** The authorization server for MCP clients, transport-free. */
export interface OauthServer {
  readonly clients: ClientRegistry;
  readonly sessions: BrowserSessions;
  readonly flow: AuthorizationFlow;
  readonly tokens: AccessTokens;
  readonly tokenEndpoint: TokenEndpoint;
  readonly keys: SigningKeys;
  readonly idTokens: OidcIdTokenAuthenticator;
}

/**
 * Builds the authorization server of `config.oauth` over `db`: its signing keys (shared by
 * every node through the database), the known clients and, when hosts are allowed, Client ID
 * Metadata Documents, browser sessions, access tokens, the authorization flow and the token
 * endpoint. `idTokens` signs people in (the built-in or an outside identity provider).
 */
export async function openOauthServer(o: {
  config: Config;
  db: Db;
  clock: Clock;
  idTokens: OidcIdTokenAuthenticator;
  /** Tests only: how CIMD fetches reach a local HTTPS server, and the cache size. */
  cimdFetch?: Pick<ClientMetadataOptions, 'ca' | 'resolveHost' | 'dialAddress' | 'maxCached'>;
}): Promise<OauthServer> {
  const { config, db, clock, idTokens } = o;
  // Access tokens live 7 days; a retired key stays published 8.
  const keys = await SigningKeys.open(db, 'oauth-signing-keys', 8 * 86_400_000, clock);
  const { cimdHosts, issuer, resource } = config.oauth;
  const documents =
    cimdHosts === '*' || cimdHosts.length > 0
      ? new ClientMetadataDocuments({
          allowedHosts: cimdHosts,
          clock,
          loopbackCa: config.oauth.cimdDevCa?.pem,
          ...o.cimdFetch,
        })
      : null;
  const clients = new ClientRegistry(config.oauth.clients, documents);
  const sessions = new BrowserSessions(db, { maxAgeMs: config.oauth.sessionMaxAgeMs });
  const scope = 'mcp:access';
  const tokens = new AccessTokens({ db, keys, issuer, resource, scope, clock });
  return {
    clients,
    sessions,
    keys,
    idTokens,
    tokens,
    flow: new AuthorizationFlow({ db, clock, clients, sessions, issuer, resource, scope }),
    tokenEndpoint: new TokenEndpoint({ db, clients, tokens, resource, clock }),
  };
}
