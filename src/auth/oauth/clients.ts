import type { OauthClientConfig } from '../../config/config.ts';
import { anyPortCallbackHosts } from '../../shared/loopback.ts';
import { OAuthError } from './oauth-error.ts';

/** A public client (no secret; PKCE is its proof), configured or described by a CIMD. */
export interface OAuthClient {
  readonly clientId: string;
  readonly name: string;
  readonly redirectUris: readonly string[];
  readonly clientUri: string | null;
  readonly logoUri: string | null;
  readonly source: 'configured' | 'metadata-document';
}

/** Looks up Client ID Metadata Documents (an HTTPS URL as client_id). */
export interface MetadataDocumentClients {
  resolve(clientId: string): Promise<OAuthClient>;
}

/** The configured client ID of the MCP Inspector and local tools (`listMcpClientInstructions`). */
export const localToolsClientId = 'atelier-local-tools';

/**
 * The callback paths of the MCP Inspector and local tools: the Inspector's and mcp-remote's
 * `/oauth/callback`, the Inspector's debug one, Claude Code's `/callback`, and VS Code's `/`
 * (when it is told a client ID instead of sending its metadata document).
 */
export const localToolsCallbackPaths = [
  '/oauth/callback',
  '/oauth/callback/debug',
  '/callback',
  '/',
];

/**
 * Always present: MCP Inspector and local tools, with portless loopback callbacks (any port)
 * on `localhost`, `127.0.0.1` and `[::1]` — clients pick one of the three (RFC 8252 §8.3
 * prefers the IP literals). Its ID is documented in `listMcpClientInstructions`.
 */
export const builtinClients: readonly OauthClientConfig[] = [
  {
    client_id: localToolsClientId,
    client_name: 'MCP Inspector and local tools',
    redirect_uris: anyPortCallbackHosts.flatMap((host) =>
      localToolsCallbackPaths.map((path) => `http://${host}${path}`),
    ),
  },
];

/** Resolves a client_id: configured clients first, then HTTPS CIMD URLs; anything else is refused. */
export class ClientRegistry {
  readonly #configured: ReadonlyMap<string, OAuthClient>;
  readonly #documents: MetadataDocumentClients | null;

  constructor(configured: readonly OauthClientConfig[], documents: MetadataDocumentClients | null) {
    this.#configured = new Map(
      [...builtinClients, ...configured].map((c) => [
        c.client_id,
        {
          clientId: c.client_id,
          name: c.client_name,
          redirectUris: c.redirect_uris,
          clientUri: null,
          logoUri: null,
          source: 'configured',
        },
      ]),
    );
    this.#documents = documents;
  }

  /**
   * Whether a configured client is called `name`, compared as a person reads it (case, width
   * and spacing folded), so a metadata document cannot pass for one.
   */
  hasConfiguredName(name: string): boolean {
    const wanted = readableName(name);
    for (const client of this.#configured.values())
      if (readableName(client.name) === wanted) return true;
    return false;
  }

  async resolve(clientId: string): Promise<OAuthClient> {
    const configured = this.#configured.get(clientId);
    if (configured !== undefined) return configured;
    if (clientId.startsWith('https://') && this.#documents !== null)
      return this.#documents.resolve(clientId);
    // An arbitrary opaque client ID is not assumed registered (spec §5.4 rule 1).
    throw new OAuthError('invalid_client', 'Unknown client_id.', false);
  }
}

/**
 * A name as a person reads it: width and compatibility forms folded (NFKC), case folded,
 * invisible characters (zero-width, bidi controls, other format characters) dropped, spacing
 * collapsed. Look-alike letters of other scripts are not folded: the consent page shows the
 * client's host for that.
 */
function readableName(name: string): string {
  return name
    .normalize('NFKC')
    .replace(/[\p{Default_Ignorable_Code_Point}\p{Cf}]/gu, '')
    .toLowerCase()
    .replace(/\s+/gu, ' ')
    .trim();
}
