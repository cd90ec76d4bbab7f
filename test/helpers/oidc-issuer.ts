import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import Provider from 'oidc-provider';
import { freePort } from './net.ts';

/**
 * A real OpenID Provider (panva's oidc-provider) on 127.0.0.1, standing in for Google, Auth0 or
 * Keycloak. The test holds its signing key, so it can also mint tokens exactly as this issuer
 * would (and craft bad ones), and rotate that key.
 */
export class TestIssuer {
  readonly url: string;
  readonly clientId = 'atelier-web';
  #port: number;
  #server: Server | undefined;
  #key!: { privateKey: CryptoKey; jwk: JWK };
  #redirectUris: string[];

  private constructor(port: number, redirectUris: string[]) {
    this.#port = port;
    this.url = `http://127.0.0.1:${port}`;
    this.#redirectUris = redirectUris;
  }

  static async start(options: { redirectUris?: string[] } = {}): Promise<TestIssuer> {
    const issuer = new TestIssuer(
      await freePort(),
      options.redirectUris ?? ['http://127.0.0.1/unused'],
    );
    await issuer.rotate();
    return issuer;
  }

  get kid(): string {
    return this.#key.jwk.kid!;
  }

  /** A new signing key with a new kid; the provider restarts on the same port with it. */
  async rotate(): Promise<void> {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const jwk = {
      ...(await exportJWK(privateKey)),
      kid: `k-${Date.now()}`,
      alg: 'RS256',
      use: 'sig',
    };
    this.#key = { privateKey, jwk };
    await this.stop();
    await this.#listen();
  }

  async #listen(): Promise<void> {
    const provider = new Provider(this.url, {
      clients: [
        {
          client_id: this.clientId,
          token_endpoint_auth_method: 'none',
          redirect_uris: this.#redirectUris,
          grant_types: ['authorization_code'],
          response_types: ['code'],
        },
      ],
      jwks: { keys: [this.#key.jwk] },
      findAccount: async (_ctx, sub) => ({
        accountId: sub,
        claims: async () => ({ sub, email: `${sub}@example.test` }),
      }),
      claims: { openid: ['sub'], email: ['email'] },
      // Put granted claims (email) in the ID token itself, as Google and most providers do.
      conformIdTokenClaims: false,
      features: { devInteractions: { enabled: true } },
      cookies: { keys: ['test-cookie-key'] },
    });
    this.#server = createServer(provider.callback());
    await new Promise<void>((resolve) => this.#server!.listen(this.#port, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /** An ID token as this issuer signs them; `claims` and `header` override for bad tokens. */
  async mint(
    claims: JWTPayload = {},
    options: {
      expiresIn?: number;
      header?: Record<string, unknown>;
      key?: CryptoKey | Uint8Array;
    } = {},
  ): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ email: `${String(claims.sub ?? 'alice')}@example.test`, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: this.kid, ...options.header })
      .setIssuer(typeof claims.iss === 'string' ? claims.iss : this.url)
      .setSubject(typeof claims.sub === 'string' ? claims.sub : 'alice')
      .setAudience((claims.aud as string | undefined) ?? this.clientId)
      .setIssuedAt(now)
      .setExpirationTime(now + (options.expiresIn ?? 300))
      .sign(options.key ?? this.#key.privateKey);
  }

  /** The public key, as a relying party would download it (for the HS256-with-public-key attack). */
  publicJwkText(): string {
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = this.#key.jwk;
    return JSON.stringify(publicJwk);
  }
}
