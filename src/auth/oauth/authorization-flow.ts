import { type LimitPeriod, limitPeriods } from '../../domain/spending-limits.ts';
import type { Clock } from '../../shared/clock.ts';
import { isLoopbackHostname } from '../../shared/loopback.ts';
import { constantTimeEqual, randomToken, sha256Hex } from '../../shared/secrets.ts';
import { appendAudit } from '../../store/audit.store.ts';
import { listBalances } from '../../store/credit.store.ts';
import type { Db } from '../../store/database.ts';
import {
  deletePendingAuthorization,
  findPendingAuthorization,
  insertCode,
  putPendingAuthorization,
  upsertConnection,
} from '../../store/oauth.store.ts';
import type { AuthorizeParams } from './authorize/authorization-request.ts';
import { validateAuthorizationRequest } from './authorize/validate-authorization-request.ts';
import type { BrowserSession, BrowserSessions } from './browser-sessions.ts';
import type { ClientRegistry, OAuthClient } from './clients.ts';
import { applyConsentLimit, consentLimit, consentLimitFields } from './consent-limit.ts';
import { OAuthError } from './oauth-error.ts';

export const pendingAuthorizationMs = 10 * 60_000; // spec §8: 10 minutes
const codeLifetimeMs = 60_000; // one minute: a code is exchanged at once
export const csrfParameterName = 'csrf_token';

/** What the consent page shows and posts (spec §4.4). */
export interface ConsentContext {
  client: {
    client_id: string;
    client_name: string;
    client_uri: string | null;
    logo_uri: string | null;
    /** Configured by this deployment's operator; false for a Client ID Metadata Document. */
    verified: boolean;
    /** The host that published a metadata-document client's `client_id` (null if configured). */
    client_id_host: string | null;
    /** The host the browser is sent back to after the decision (an app's scheme, `app:`). */
    redirect_host: string;
    /** The callback is on this computer (a loopback address): an app running locally. */
    loopback_redirect: boolean;
  };
  /** What the person should know before deciding, most important first. */
  notices: ConsentNotice[];
  permissions: Array<{ scope: string; description: string }>;
  form: {
    action: string;
    method: 'POST';
    clientId: string;
    state: string;
    approveScope: string;
    csrfParameterName: string;
    csrfToken: string;
  };
  /** The optional spending limit the form may carry: field names and the choices to offer. */
  spendingLimit: {
    fields: typeof consentLimitFields;
    categories: string[];
    periods: readonly LimitPeriod[];
  };
}

export interface ConsentNotice {
  kind: 'impersonation' | 'unverified-client' | 'loopback-redirect' | 'app-redirect';
  severity: 'warning' | 'info';
  message: string;
}

export interface FlowDeps {
  db: Db;
  clock: Clock;
  clients: ClientRegistry;
  sessions: BrowserSessions;
  issuer: string;
  resource: string;
  scope: string;
}

/**
 * The browser part of the authorization code flow: a validated request becomes a pending
 * authorization of the browser session; sign-in and consent happen in that session; consent
 * issues a single-use code to the registered redirect URI.
 */
export class AuthorizationFlow {
  readonly #d: FlowDeps;

  constructor(deps: FlowDeps) {
    this.#d = deps;
  }

  /** `GET /oauth/authorize?…`: checks the request, remembers it, and says where the browser goes. */
  async begin(
    params: AuthorizeParams,
    current: BrowserSession | null,
  ): Promise<{ session: BrowserSession; location: string }> {
    const request = await validateAuthorizationRequest(params, this.#d);
    const session = current ?? (await this.#d.sessions.create());
    await putPendingAuthorization(this.#d.db, {
      session_hash: session.idHash,
      client_id: request.client.clientId,
      redirect_uri: request.redirectUri,
      resource: request.resource,
      scope: request.scope,
      state: request.state,
      code_challenge: request.codeChallenge,
      lifetimeMs: pendingAuthorizationMs,
    });
    return { session, location: await this.resume(session) };
  }

  /** Query-free `GET /oauth/authorize`: where a session with a pending authorization goes next. */
  async resume(session: BrowserSession | null): Promise<string> {
    const pending =
      session === null ? undefined : await findPendingAuthorization(this.#d.db, session.idHash);
    if (session === null || pending === undefined) {
      throw new OAuthError(
        'invalid_request',
        'No authorization is pending in this browser (or it expired): start again from your app.',
        false,
      );
    }
    if (session.accountId === null) return '/login?next=authorize';
    const query = new URLSearchParams({
      client_id: pending.client_id,
      state: pending.state,
      scope: pending.scope,
    });
    return `/consent?${query}`;
  }

  /** Whether the session has an unexpired pending authorization (`POST /auth/session` needs one). */
  async hasPending(session: BrowserSession): Promise<boolean> {
    return (await findPendingAuthorization(this.#d.db, session.idHash)) !== undefined;
  }

  /**
   * The redirect URI of the session's pending authorization, or null: the consent page allows
   * only its origin as a form target.
   */
  async pendingRedirect(session: BrowserSession): Promise<string | null> {
    return (await findPendingAuthorization(this.#d.db, session.idHash))?.redirect_uri ?? null;
  }

  /** `GET /oauth/consent/context`: the pending request, if the query names it exactly. */
  async context(
    session: BrowserSession,
    query: Readonly<Record<string, string>>,
  ): Promise<ConsentContext> {
    const { pending, client } = await this.#pendingFor(session, query.client_id, query.state);
    if (query.scope !== pending.scope)
      throw new OAuthError('invalid_request', `scope must be ${pending.scope}.`, false);
    const redirect = describeRedirect(pending.redirect_uri);
    const verified = client.source === 'configured';
    const clientIdHost = verified ? null : new URL(client.clientId).host;
    return {
      client: {
        client_id: client.clientId,
        client_name: client.name,
        client_uri: client.clientUri,
        logo_uri: client.logoUri,
        verified,
        client_id_host: clientIdHost,
        redirect_host: redirect.host,
        loopback_redirect: redirect.kind === 'loopback',
      },
      notices: consentNotices({
        name: client.name,
        clientIdHost,
        impersonates: !verified && this.#d.clients.hasConfiguredName(client.name),
        redirect,
      }),
      permissions: [
        {
          scope: pending.scope,
          description:
            'Use Atelier as you: see your account and credits, run generations that spend credits, and read their results.',
        },
      ],
      form: {
        action: '/oauth/authorize',
        method: 'POST',
        clientId: client.clientId,
        state: pending.state,
        approveScope: pending.scope,
        csrfParameterName,
        csrfToken: session.csrfToken,
      },
      spendingLimit: {
        fields: consentLimitFields,
        categories: (await listBalances(this.#d.db, session.accountId!)).map((b) => b.category),
        periods: limitPeriods,
      },
    };
  }

  /**
   * `POST /oauth/authorize`: the person's decision. With the approve scope, the consent is
   * remembered (the MCP connection) and a code is issued; without it, access is denied.
   * Either way the browser goes back to the client with `state` and `iss` (RFC 9207).
   */
  async decide(
    session: BrowserSession,
    form: Readonly<Record<string, string>>,
    address: string | null = null,
  ): Promise<string> {
    const csrf = form[csrfParameterName];
    if (csrf === undefined || !constantTimeEqual(csrf, session.csrfToken)) {
      throw new OAuthError(
        'invalid_request',
        'The form is stale or forged (CSRF token).',
        false,
        403,
      );
    }
    const { pending, client } = await this.#pendingFor(session, form.client_id, form.state);
    // Checked before the request is used up, so a person can go back and correct it.
    const limit = form.scope === pending.scope ? consentLimit(form) : null;
    await deletePendingAuthorization(this.#d.db, session.idHash);
    const back = new URL(pending.redirect_uri);
    if (form.scope !== pending.scope) {
      back.searchParams.set('error', 'access_denied');
    } else {
      const code = randomToken();
      // The consent, its limit, its audit entry and its code stand or fall together.
      await this.#d.db.transaction().execute(async (trx) => {
        await upsertConnection(trx, {
          accountId: session.accountId!,
          clientId: client.clientId,
          clientName: client.name,
          clientUri: client.clientUri,
          logoUri: client.logoUri,
          scopes: pending.scope,
        });
        if (limit !== null) {
          await applyConsentLimit(
            trx,
            session.accountId!,
            client.clientId,
            limit,
            this.#d.clock.now(),
          );
        }
        await appendAudit(
          trx,
          this.#d.clock.now(),
          { accountId: session.accountId!, credential: 'browser_session', address },
          {
            accountId: session.accountId!,
            action: 'mcp.consented',
            target: client.clientId,
            detail: { clientName: client.name, scopes: pending.scope, limits: limit },
          },
        );
        await insertCode(trx, {
          code_hash: sha256Hex(code),
          client_id: client.clientId,
          account_id: session.accountId!,
          redirect_uri: pending.redirect_uri,
          resource: pending.resource,
          scope: pending.scope,
          code_challenge: pending.code_challenge,
          // The token endpoint compares this on the clock port, so it is written on it too.
          expires_at: new Date(this.#d.clock.now().getTime() + codeLifetimeMs),
        });
      });
      back.searchParams.set('code', code);
    }
    back.searchParams.set('state', pending.state);
    back.searchParams.set('iss', this.#d.issuer);
    return back.href;
  }

  async #pendingFor(
    session: BrowserSession,
    clientId: string | undefined,
    state: string | undefined,
  ) {
    if (session.accountId === null) throw new OAuthError('access_denied', 'Sign in first.', false);
    const pending = await findPendingAuthorization(this.#d.db, session.idHash);
    // Another browser's request and one that never existed get the very same answer: which
    // (client_id, state) pairs are pending elsewhere is nobody's business here.
    if (pending === undefined || clientId !== pending.client_id || state !== pending.state) {
      throw new OAuthError(
        'invalid_request',
        'This browser has no such pending authorization (or it expired): start again from your app.',
        false,
        404,
      );
    }
    const client: OAuthClient = await this.#d.clients.resolve(pending.client_id);
    return { pending, client };
  }
}

/**
 * Where the decision sends the browser: a web host, a loopback callback of an app on this
 * computer (`localhost`, 127.0.0.0/8, ::1), or a native app's own scheme, which any app on the
 * device may have claimed (RFC 8252 §8.6).
 */
function describeRedirect(uri: string): { kind: 'web' | 'loopback' | 'app'; host: string } {
  const url = new URL(uri);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { kind: 'app', host: url.protocol };
  return { kind: isLoopbackHostname(url.hostname) ? 'loopback' : 'web', host: url.host };
}

/**
 * The notices of the consent page. A metadata-document client names itself, so its name proves
 * nothing: the host that published it is shown as not verified, and a name that a configured
 * client uses is called out, so two clients with one name never look the same.
 */
function consentNotices(c: {
  name: string;
  clientIdHost: string | null;
  impersonates: boolean;
  redirect: { kind: 'web' | 'loopback' | 'app'; host: string };
}): ConsentNotice[] {
  const notices: ConsentNotice[] = [];
  if (c.impersonates) {
    notices.push({
      kind: 'impersonation',
      severity: 'warning',
      message: `“${c.name}” is also the name of an app this server trusts, but this request comes from ${c.clientIdHost}, not from that app. Deny unless you expected it.`,
    });
  }
  if (c.clientIdHost !== null) {
    notices.push({
      kind: 'unverified-client',
      severity: 'warning',
      message: `This app describes itself from ${c.clientIdHost}; Atelier has not verified who runs it.`,
    });
  }
  if (c.redirect.kind === 'loopback') {
    notices.push({
      kind: 'loopback-redirect',
      severity: 'info',
      message: 'You will be sent back to an app running on this computer.',
    });
  }
  if (c.redirect.kind === 'app') {
    notices.push({
      kind: 'app-redirect',
      severity: 'warning',
      message: `You will be sent back to whichever app on this device handles ${c.redirect.host} links.`,
    });
  }
  return notices;
}
