import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import type { TestApp } from './app.ts';

/**
 * A browser without a screen: follows nothing by itself, keeps cookies, sends an Origin on
 * the requests a page of the server would make. Enough to walk the sign-in and consent pages.
 */
export class TestBrowser {
  readonly cookies = new Map<string, string>();
  readonly #origin: string;

  constructor(origin: string) {
    this.#origin = origin;
  }

  async request(
    url: string,
    init: RequestInit & { origin?: string | null } = {},
  ): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0)
      headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const origin = init.origin === undefined ? this.#origin : init.origin;
    if (origin !== null && (init.method ?? 'GET') !== 'GET') headers.set('origin', origin);
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = pair!.split('=');
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name!);
      else this.cookies.set(name!, value.join('='));
    }
    return response;
  }
}

export interface Pkce {
  verifier: string;
  challenge: string;
  state: string;
}

export async function newPkce(): Promise<Pkce> {
  const verifier = oauth.generateRandomCodeVerifier();
  return {
    verifier,
    challenge: await oauth.calculatePKCECodeChallenge(verifier),
    state: oauth.generateRandomState(),
  };
}

export function authorizeUrl(
  base: string,
  params: {
    clientId: string;
    redirectUri: string;
    pkce: Pkce;
    resource?: string;
    scope?: string;
    extra?: Record<string, string>;
  },
): string {
  const url = new URL(`${base}/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: params.clientId,
    redirect_uri: params.redirectUri,
    scope: params.scope ?? 'mcp:access',
    resource: params.resource ?? `${base}/mcp`,
    code_challenge: params.pkce.challenge,
    code_challenge_method: 'S256',
    state: params.pkce.state,
    ...params.extra,
  }).toString();
  return url.href;
}

/** Signs the browser in through the built-in provider and `POST /auth/session`. */
export async function signInBrowser(
  browser: TestBrowser,
  base: string,
  email: string,
  password: string,
): Promise<void> {
  const signIn = await fetch(`${base}/idp/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const { idToken } = (await signIn.json()) as { idToken: string };
  const session = await browser.request(`${base}/auth/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id_token: idToken }),
  });
  assert.equal(session.status, 204, await session.text());
}

/**
 * The browser part of an authorization, as a person would click it: authorize → sign in →
 * resume → consent (approve or deny). Returns the URL the browser is sent back to.
 */
export async function authorizeInBrowser(
  browser: TestBrowser,
  base: string,
  url: string,
  who: { email: string; password: string },
  approve = true,
): Promise<URL> {
  const started = await browser.request(url);
  assert.equal(started.status, 303, await started.clone().text());
  if (started.headers.get('location') === '/login?next=authorize') {
    await signInBrowser(browser, base, who.email, who.password);
  }
  const resumed = await browser.request(`${base}/oauth/authorize`);
  assert.equal(resumed.status, 303);
  const consent = new URL(resumed.headers.get('location')!, base);
  assert.equal(consent.pathname, '/consent');
  const context = await browser.request(`${base}/oauth/consent/context${consent.search}`);
  assert.equal(context.status, 200, await context.clone().text());
  const { form } = (await context.json()) as { form: Record<string, string> };
  const body = new URLSearchParams({
    client_id: form.clientId!,
    state: form.state!,
    [form.csrfParameterName!]: form.csrfToken!,
  });
  if (approve) body.set('scope', form.approveScope!);
  const decided = await browser.request(`${base}${form.action}`, {
    method: form.method,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  assert.equal(decided.status, 303, await decided.clone().text());
  return new URL(decided.headers.get('location')!);
}

/**
 * A person gets a built-in sign-in for `accountId` and authorizes `clientId` in a fresh
 * browser: the URL the consent sent them back to, and the PKCE pair to exchange its code with.
 */
export async function authorizedCallback(
  t: TestApp,
  o: {
    accountId: string;
    who: { email: string; password: string };
    clientId: string;
    redirectUri: string;
  },
): Promise<{ callback: URL; pkce: Pkce }> {
  await t.app.services.identityProvider!.addUser({ accountId: o.accountId, ...o.who });
  const pkce = await newPkce();
  const callback = await authorizeInBrowser(
    new TestBrowser(t.url),
    t.url,
    authorizeUrl(t.url, { clientId: o.clientId, redirectUri: o.redirectUri, pkce }),
    o.who,
  );
  return { callback, pkce };
}

/** The client side with oauth4webapi: discovery, then the code exchange with PKCE and resource. */
export async function exchangeWithOauth4webapi(
  base: string,
  clientId: string,
  redirectUri: string,
  callback: URL,
  pkce: Pkce,
) {
  const issuer = new URL(base);
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, {
      algorithm: 'oauth2',
      [oauth.allowInsecureRequests]: true,
    }),
  );
  const client = { client_id: clientId };
  const params = oauth.validateAuthResponse(as, client, callback, pkce.state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    params,
    redirectUri,
    pkce.verifier,
    {
      additionalParameters: { resource: `${base}/mcp` },
      [oauth.allowInsecureRequests]: true,
    },
  );
  return oauth.processAuthorizationCodeResponse(as, client, response);
}

/** A raw token request, for the cases a library would refuse to send. */
export async function tokenRequest(base: string, fields: Record<string, string>) {
  const response = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, string>,
  };
}

/** The form of a code exchange for `callback`'s code, as a correct client sends it. */
export function codeExchangeFields(
  base: string,
  clientId: string,
  redirectUri: string,
  callback: URL,
  pkce: Pkce,
) {
  return {
    grant_type: 'authorization_code',
    client_id: clientId,
    code: callback.searchParams.get('code')!,
    redirect_uri: redirectUri,
    code_verifier: pkce.verifier,
    resource: `${base}/mcp`,
  };
}
