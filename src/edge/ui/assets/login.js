// The sign-in page's script: ends with the identity provider's ID token in sessionStorage
// ("atelier.idToken"), for the GraphQL X-IdP-Token header and the OAuth consent flow.
import * as oauth from '/assets/oauth4webapi.js';

const config = document.body.dataset;
const storageKey = 'atelier.idToken';
const flowKey = 'atelier.oidcFlow';
const $ = (id) => document.getElementById(id);

function claimsOf(idToken) {
  const payload = idToken.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
  return JSON.parse(atob(payload));
}

function say(text) {
  $('message').textContent = text;
  $('message').hidden = text === '';
}

/** Shows the signed-in state when a stored token is still valid; forgets an expired one. */
function showSignedIn() {
  const idToken = sessionStorage.getItem(storageKey);
  const claims = idToken === null ? null : claimsOf(idToken);
  if (claims === null || claims.exp * 1000 <= Date.now()) {
    sessionStorage.removeItem(storageKey);
    $('sign-in').hidden = false;
    $('signed-in').hidden = true;
    return;
  }
  $('who').textContent = claims.email ?? claims.sub;
  $('sign-in').hidden = true;
  $('signed-in').hidden = false;
  document.dispatchEvent(new CustomEvent('atelier:signed-in', { detail: { idToken } }));
}

const nextKey = 'atelier.next';
const next = new URLSearchParams(window.location.search).get('next');
if (next === 'authorize' || next === 'console') sessionStorage.setItem(nextKey, next);

/**
 * Where a sign-in continues. In an authorization (an MCP client connecting), the ID token
 * opens the browser session (`POST /auth/session`) and the flow resumes with a query-free
 * GET /oauth/authorize. From the console (`/login?next=console`), back to it.
 */
async function continueAuthorization(idToken) {
  const after = sessionStorage.getItem(nextKey);
  if (after === 'console') {
    sessionStorage.removeItem(nextKey);
    window.location.assign('/');
    return;
  }
  if (after !== 'authorize') return;
  sessionStorage.removeItem(nextKey);
  const response = await fetch('/auth/session', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id_token: idToken }),
  });
  if (response.status === 204) {
    window.location.assign('/oauth/authorize');
    return;
  }
  const body = await response.json().catch(() => ({}));
  say(body.error_description ?? 'The authorization could not continue; start again from your app.');
}

function signedIn(idToken) {
  sessionStorage.setItem(storageKey, idToken);
  say('');
  showSignedIn();
  continueAuthorization(idToken).catch((error) => say(error.message));
}

async function signInWithPassword(event) {
  event.preventDefault();
  const form = new FormData(event.target);
  say('');
  const response = await fetch('/idp/sign-in', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: form.get('email'), password: form.get('password') }),
  });
  const body = await response.json();
  if (response.ok) signedIn(body.idToken);
  else say(body.error?.message ?? 'Sign-in failed.');
}

// --- an external OpenID Connect issuer: authorization code + PKCE, as a public client ---

const client = { client_id: config.clientId };
const insecure = config.insecure === 'true' ? { [oauth.allowInsecureRequests]: true } : {};

async function authorizationServer() {
  const issuer = new URL(config.issuer);
  const response = await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure });
  return oauth.processDiscoveryResponse(issuer, response);
}

async function startOidcSignIn() {
  const as = await authorizationServer();
  const flow = {
    verifier: oauth.generateRandomCodeVerifier(),
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
  };
  sessionStorage.setItem(flowKey, JSON.stringify(flow));
  const url = new URL(as.authorization_endpoint);
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: config.redirectUri,
    response_type: 'code',
    scope: 'openid email',
    code_challenge: await oauth.calculatePKCECodeChallenge(flow.verifier),
    code_challenge_method: 'S256',
    state: flow.state,
    nonce: flow.nonce,
  }).toString();
  window.location.assign(url.href);
}

async function finishOidcSignIn() {
  const flow = JSON.parse(sessionStorage.getItem(flowKey) ?? 'null');
  sessionStorage.removeItem(flowKey);
  const current = new URL(window.location.href);
  history.replaceState(null, '', '/login');
  if (flow === null) throw new Error('This sign-in was not started here; start again.');
  const as = await authorizationServer();
  const params = oauth.validateAuthResponse(as, client, current, flow.state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    params,
    config.redirectUri,
    flow.verifier,
    insecure,
  );
  const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
    expectedNonce: flow.nonce,
    requireIdToken: true,
  });
  signedIn(result.id_token);
}

$('sign-out').addEventListener('click', () => {
  sessionStorage.removeItem(storageKey);
  showSignedIn();
});

if (config.mode === 'builtin') {
  $('password-form').addEventListener('submit', (event) => {
    signInWithPassword(event).catch((error) => say(error.message));
  });
} else {
  $('oidc-sign-in').addEventListener('click', () => {
    startOidcSignIn().catch((error) => say(error.message));
  });
  const params = new URLSearchParams(window.location.search);
  if (params.has('code') || params.has('error')) {
    finishOidcSignIn().catch((error) => say(`Sign-in failed: ${error.message}`));
  }
}
showSignedIn();
// Already signed in when an authorization starts: continue at once.
const stored = sessionStorage.getItem(storageKey);
if (stored !== null && !$('signed-in').hidden)
  continueAuthorization(stored).catch((error) => say(error.message));
