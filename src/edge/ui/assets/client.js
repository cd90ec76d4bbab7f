// The console's one way to the API: the ID token from /login (sessionStorage
// "atelier.idToken") in X-IdP-Token on POST /graphql. An expired token, or one the server
// refuses, sends the person back to /login. Shared by console.js and the admin pages.

const storageKey = 'atelier.idToken';
export const unauthenticated = '100101';
export const forbidden = '110202';

function claimsOf(idToken) {
  try {
    const payload = idToken.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(payload));
  } catch {
    return null;
  }
}

/** The stored ID token while it is valid for another few seconds, else null (and forgotten). */
export function currentToken() {
  const idToken = sessionStorage.getItem(storageKey);
  if (idToken === null) return null;
  const claims = claimsOf(idToken);
  if (claims === null || typeof claims.exp !== 'number' || claims.exp * 1000 < Date.now() + 5000) {
    sessionStorage.removeItem(storageKey);
    return null;
  }
  return idToken;
}

export function forgetToken() {
  sessionStorage.removeItem(storageKey);
}

function signInAgain() {
  forgetToken();
  window.location.assign('/login?next=console');
}

/** A GraphQL error: its message, `extensions.code` and the rest of its extensions (`field`…). */
export class ApiError extends Error {
  constructor(message, code, extensions) {
    super(message);
    this.code = code;
    this.extensions = extensions;
  }
}

export async function api(query, variables = {}) {
  const idToken = currentToken();
  if (idToken === null) {
    signInAgain();
    throw new ApiError('Your sign-in has expired.', unauthenticated, {});
  }
  const response = await fetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-idp-token': idToken },
    body: JSON.stringify({ query, variables }),
  });
  const body = await response.json();
  const error = body.errors?.[0];
  if (error !== undefined) {
    const code = error.extensions?.code;
    if (code === unauthenticated) signInAgain();
    throw new ApiError(error.message, code, error.extensions ?? {});
  }
  return body.data;
}
