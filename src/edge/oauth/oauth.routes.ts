import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IdTokenAuthenticator } from '../../auth/authenticate.ts';
import type { AccessTokens } from '../../auth/oauth/access-tokens.ts';
import type { AuthorizationFlow } from '../../auth/oauth/authorization-flow.ts';
import type { BrowserSessions } from '../../auth/oauth/browser-sessions.ts';
import type { ClientRegistry } from '../../auth/oauth/clients.ts';
import { OAuthError } from '../../auth/oauth/oauth-error.ts';
import type { TokenEndpoint } from '../../auth/oauth/token-endpoint.ts';
import type { SigningKeys } from '../../auth/signing-keys.ts';
import type { OauthConfig } from '../../config/config.ts';
import { corsHeaders, preflightRoute } from '../http/cors.ts';
import { errorPage } from '../ui/error.page.ts';
import {
  currentSession,
  fromOwnOrigin,
  oauthErrorBody,
  sessionCookie,
  setSessionCookie,
  singleValued,
} from './oauth-http.ts';

/**
 * Read from any origin, without credentials: the discovery documents and the keys are public,
 * and a token request proves itself in its body (code, PKCE verifier), never with a cookie,
 * so a browser-based MCP client can run the whole exchange from its own page.
 */
const publicCors = [
  ['/.well-known/oauth-protected-resource/mcp', 'GET'],
  ['/.well-known/oauth-protected-resource', 'GET'],
  ['/.well-known/oauth-authorization-server', 'GET'],
  ['/oauth/jwks', 'GET'],
  ['/oauth/token', 'POST'],
] as const;
/** The MCP SDK sends its protocol version on discovery too. */
const publicRequestHeaders = ['content-type', 'mcp-protocol-version'];
const anyOrigin = corsHeaders('*');

export interface OauthRoutesOptions {
  oauth: OauthConfig;
  clients: ClientRegistry;
  tokenEndpoint: TokenEndpoint;
  sessions: BrowserSessions;
  flow: AuthorizationFlow;
  tokens: AccessTokens;
  keys: SigningKeys;
  idTokens: IdTokenAuthenticator;
}

/**
 * The authorization server over HTTP (spec §4.3, §4.4): discovery, authorize (GET starts or
 * resumes, POST decides), token, JWKS, consent context and the browser session helpers. No
 * registration, introspection or revocation endpoint exists.
 */
export async function oauthRoutes(app: FastifyInstance, o: OauthRoutesOptions) {
  const { oauth } = o;
  const publicOrigin = new URL(oauth.issuer).origin;
  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

  const resourceMetadata = {
    resource: oauth.resource,
    authorization_servers: [oauth.issuer],
    scopes_supported: ['mcp:access'],
    bearer_methods_supported: ['header'],
    resource_name: 'Atelier',
  };
  for (const path of [
    '/.well-known/oauth-protected-resource/mcp',
    '/.well-known/oauth-protected-resource',
  ]) {
    app.get(path, { onRequest: anyOrigin }, async () => resourceMetadata);
  }
  app.get('/.well-known/oauth-authorization-server', { onRequest: anyOrigin }, async () => ({
    issuer: oauth.issuer,
    authorization_endpoint: `${oauth.issuer}/oauth/authorize`,
    token_endpoint: `${oauth.issuer}/oauth/token`,
    jwks_uri: `${oauth.issuer}/oauth/jwks`,
    scopes_supported: ['mcp:access'],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    client_id_metadata_document_supported: oauth.cimdHosts === '*' || oauth.cimdHosts.length > 0,
    authorization_response_iss_parameter_supported: true,
  }));
  app.get('/oauth/jwks', { onRequest: anyOrigin }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').send(o.keys.jwks),
  );
  for (const [url, method] of publicCors) {
    preflightRoute(app, url, { origins: '*', methods: [method], headers: publicRequestHeaders });
  }

  /** Errors no redirect URI can be trusted with are shown; the others go back to the client. */
  const authorizeError = (
    reply: FastifyReply,
    error: unknown,
    redirect?: { uri: string; state?: string | undefined },
  ) => {
    if (!(error instanceof OAuthError)) throw error;
    if (error.detail !== undefined) {
      reply.request.log.info({ error: error.error, detail: error.detail }, 'authorization refused');
    }
    if (!error.redirectable || redirect === undefined) {
      return noStore(reply)
        .code(error.status)
        .type('text/html; charset=utf-8')
        .send(errorPage('This sign-in request cannot continue', error.message));
    }
    const back = new URL(redirect.uri);
    back.searchParams.set('error', error.error);
    back.searchParams.set('error_description', error.message);
    if (redirect.state !== undefined) back.searchParams.set('state', redirect.state);
    back.searchParams.set('iss', oauth.issuer);
    return reply.redirect(back.href, 303);
  };

  // Each cookie-less request writes a session and a pending authorization: counted per IP.
  app.get(
    '/oauth/authorize',
    { onRequest: app.limits.auth('authorize') },
    async (request, reply) => {
      const session = await currentSession(request, o.sessions, oauth);
      let params: Record<string, string>;
      try {
        params = singleValued(request.query);
        if (Object.keys(params).length === 0)
          return noStore(reply).redirect(await o.flow.resume(session), 303);
        const started = await o.flow.begin(params, session);
        if (started.session !== session) setSessionCookie(reply, oauth, started.session);
        return noStore(reply).redirect(started.location, 303);
      } catch (error) {
        const q = request.query as Record<string, unknown>;
        const redirectable =
          typeof q.redirect_uri === 'string'
            ? { uri: q.redirect_uri, state: typeof q.state === 'string' ? q.state : undefined }
            : undefined;
        return authorizeError(reply, error, redirectable);
      }
    },
  );

  app.get('/oauth/consent/context', async (request, reply) => {
    noStore(reply);
    const session = await currentSession(request, o.sessions, oauth);
    if (session === null || session.accountId === null) {
      return reply.code(401).send({ error: 'login_required', error_description: 'Sign in first.' });
    }
    try {
      return await o.flow.context(session, singleValued(request.query));
    } catch (error) {
      if (error instanceof OAuthError) return reply.code(error.status).send(oauthErrorBody(error));
      throw error;
    }
  });

  app.post('/oauth/authorize', async (request, reply) => {
    noStore(reply);
    const session = await currentSession(request, o.sessions, oauth);
    try {
      if (!fromOwnOrigin(request, publicOrigin, { required: false, opaqueAllowed: true }))
        throw new OAuthError('invalid_request', 'Foreign origin.', false, 403);
      if (session === null)
        throw new OAuthError(
          'access_denied',
          'Your sign-in session ended; start again from your app.',
          false,
        );
      return reply.redirect(
        await o.flow.decide(session, singleValued(request.body), request.ip),
        303,
      );
    } catch (error) {
      return authorizeError(reply, error);
    }
  });

  app.post(
    '/oauth/token',
    { onRequest: [anyOrigin, app.limits.auth('token')] },
    async (request, reply) => {
      noStore(reply).header('pragma', 'no-cache');
      try {
        return await o.tokenEndpoint.exchange(singleValued(request.body));
      } catch (error) {
        if (!(error instanceof OAuthError)) throw error;
        return reply.code(error.error === 'invalid_client' ? 401 : 400).send(oauthErrorBody(error));
      }
    },
  );

  // ---- browser session helpers (spec §4.4) ----

  app.post(
    '/auth/session',
    { onRequest: app.limits.auth('session') },
    async (request: FastifyRequest, reply) => {
      noStore(reply);
      const body = request.body as Record<string, unknown> | undefined;
      if (
        typeof body !== 'object' ||
        body === null ||
        Object.keys(body).length !== 1 ||
        typeof body.id_token !== 'string'
      ) {
        return reply.code(400).send({
          error: 'invalid_request',
          error_description: 'The body is exactly {"id_token": "…"}.',
        });
      }
      if (!fromOwnOrigin(request, publicOrigin, { required: true })) {
        return reply.code(403).send({
          error: 'invalid_request',
          error_description: 'Sign-in is accepted from this server’s pages only.',
        });
      }
      const session = await currentSession(request, o.sessions, oauth);
      // Spec §4.4: only a pending anonymous session signs in; a signed-in one keeps its identity.
      if (session !== null && session.accountId !== null) {
        return reply.code(409).send({
          error: 'invalid_request',
          error_description: 'This browser is already signed in; sign out first to switch.',
        });
      }
      if (session === null || !(await o.flow.hasPending(session))) {
        return reply.code(400).send({
          error: 'invalid_request',
          error_description: 'No authorization is pending in this browser.',
        });
      }
      const auth = await o.idTokens.authenticate(body.id_token);
      if (auth.kind !== 'actor') {
        const status = auth.kind === 'refused' && auth.error.retryable ? 503 : 401;
        return reply.code(status).send({
          error: 'invalid_token',
          error_description: auth.kind === 'refused' ? auth.error.message : 'No identity.',
        });
      }
      const signedIn = await o.sessions.signIn(session, auth.actor.accountId);
      setSessionCookie(reply, oauth, signedIn);
      return reply.code(204).send();
    },
  );

  app.get('/auth/session', async (request, reply) => {
    noStore(reply);
    const session = await currentSession(request, o.sessions, oauth);
    if (session === null || session.accountId === null)
      return reply.code(401).send({ authenticated: false });
    return { authenticated: true, csrf: { headerName: 'x-csrf-token', token: session.csrfToken } };
  });

  app.delete('/auth/session', async (request, reply) => {
    noStore(reply);
    const session = await currentSession(request, o.sessions, oauth);
    if (!fromOwnOrigin(request, publicOrigin, { required: true }))
      return reply.code(403).send({ error: 'invalid_request' });
    const csrf = request.headers['x-csrf-token'];
    if (session === null || typeof csrf !== 'string' || csrf !== session.csrfToken) {
      return reply.code(403).send({
        error: 'invalid_request',
        error_description: 'A valid session and CSRF token are required.',
      });
    }
    await o.sessions.destroy(session);
    const { name, options } = sessionCookie(oauth);
    reply.clearCookie(name, options);
    return reply.code(204).send();
  });
}
