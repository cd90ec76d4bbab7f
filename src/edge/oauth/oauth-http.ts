import type { FastifyReply, FastifyRequest } from 'fastify';
import type { BrowserSession, BrowserSessions } from '../../auth/oauth/browser-sessions.ts';
import { OAuthError } from '../../auth/oauth/oauth-error.ts';
import type { OauthConfig } from '../../config/config.ts';

/** Cookie of the browser session: `__Host-` and Secure, except on plain-http localhost. */
export function sessionCookie(oauth: OauthConfig) {
  return {
    name: oauth.secureCookies ? '__Host-atelier_session' : 'atelier_session',
    options: { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: oauth.secureCookies },
  };
}

export async function currentSession(
  request: FastifyRequest,
  sessions: BrowserSessions,
  oauth: OauthConfig,
): Promise<BrowserSession | null> {
  return sessions.find(request.cookies[sessionCookie(oauth).name]);
}

export function setSessionCookie(
  reply: FastifyReply,
  oauth: OauthConfig,
  session: BrowserSession,
): void {
  const cookie = sessionCookie(oauth);
  reply.setCookie(cookie.name, session.id, cookie.options);
}

/**
 * Flat parameters: each given once. A repeated parameter is an error (RFC 6749 §3.1), never
 * silently the first or the last.
 */
export function singleValued(input: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries((input ?? {}) as Record<string, unknown>)) {
    if (typeof value !== 'string')
      throw new OAuthError('invalid_request', `${name} must be given once.`, false);
    out[name] = value;
  }
  return out;
}

/**
 * The request comes from a page of this server. `opaqueAllowed`: a form post from our own
 * page arrives with `Origin: null`, because the pages are served with
 * `Referrer-Policy: no-referrer`; there the CSRF token and the SameSite=Lax cookie carry the
 * proof, and any explicit foreign origin is still refused.
 */
export function fromOwnOrigin(
  request: FastifyRequest,
  publicOrigin: string,
  rule: { required: boolean; opaqueAllowed?: boolean },
): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return !rule.required;
  if (origin === 'null') return rule.opaqueAllowed === true;
  return origin === publicOrigin;
}

export function oauthErrorBody(error: OAuthError) {
  return { error: error.error, error_description: error.message };
}
