import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * What an MCP host application keeps for the official SDK's `auth()`: the SDK calls it, the
 * test plays the person (`authorizationUrl` is where the browser would be sent). The client is
 * a configured `clientId`, or a Client ID Metadata Document at `metadataUrl`.
 */
export class RecordingProvider implements OAuthClientProvider {
  readonly redirectUrl: string;
  readonly clientMetadata: OAuthClientMetadata;
  readonly clientMetadataUrl: string | undefined;
  authorizationUrl: URL | undefined;
  #information: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = '';

  constructor(client: { clientId?: string; metadataUrl?: string }, redirectUri: string) {
    this.redirectUrl = redirectUri;
    this.clientMetadata = {
      client_name: 'SDK test client',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
    this.#information = client.clientId === undefined ? undefined : { client_id: client.clientId };
    this.clientMetadataUrl = client.metadataUrl;
  }

  state() {
    return crypto.randomUUID();
  }
  clientInformation() {
    return this.#information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.#information = information;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
}

/**
 * A desktop client's own callback listener on 127.0.0.1, at a port the system picks:
 * `redirectUri` to register, `follow` plays the browser returning there and gives the URL the
 * listener received. Close it with `close`.
 */
export async function loopbackCallbackListener(callbackPath = '/callback') {
  const server = createServer((_req, res) => res.end('You may close this window.'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const redirectUri = `http://127.0.0.1:${port}${callbackPath}`;
  return {
    redirectUri,
    /** Opens `sentBack` (where the consent sent the browser) and returns what arrived. */
    follow: async (sentBack: URL): Promise<URL> => {
      const arrived = once(server, 'request') as Promise<[IncomingMessage]>;
      const response = await fetch(sentBack);
      assert.equal(response.status, 200, await response.text());
      const [request] = await arrived;
      return new URL(request.url!, redirectUri);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
