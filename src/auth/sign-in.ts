import type { Config } from '../config/config.ts';
import type { Clock } from '../shared/clock.ts';
import type { Db } from '../store/database.ts';
import { BuiltinIdentityProvider } from './builtin-idp.ts';
import { OidcIdTokenAuthenticator } from './id-token-authenticator.ts';
import { IdTokenVerifier } from './id-token-verifier.ts';
import { remoteIssuerKeys } from './issuer-keys.ts';

/**
 * How people sign in, from `config.identity`: the built-in identity provider (null when an
 * outside one is configured) and the authenticator of ID tokens, which checks them against
 * the built-in provider's keys or the outside issuer's JWKS. `records`: this process records
 * the built-in provider's issuer on a new data store (a server does; see
 * BuiltinIdentityProvider.open).
 */
export async function openSignIn(o: {
  config: Config;
  db: Db;
  clock: Clock;
  records: boolean;
}): Promise<{
  identityProvider: BuiltinIdentityProvider | null;
  idTokens: OidcIdTokenAuthenticator;
}> {
  const { db, clock } = o;
  const { identity, publicUrl } = o.config;
  const identityProvider = identity.builtin
    ? await BuiltinIdentityProvider.open({
        db,
        clock,
        proposedIssuer: identity.issuer,
        audience: identity.audience,
        publicUrl,
        records: o.records,
      })
    : null;
  const idTokens = new OidcIdTokenAuthenticator({
    db,
    createAccounts: identity.createAccounts,
    verifier: new IdTokenVerifier({
      // The built-in provider's issuer is the data store's, not this process's PUBLIC_URL/idp.
      issuer: identityProvider?.issuer ?? identity.issuer,
      audience: identity.audience,
      algorithms: identity.algorithms,
      clock,
      keys:
        identityProvider === null
          ? remoteIssuerKeys({
              issuer: identity.issuer,
              jwksUri: identity.jwksUri,
              cooldownMs: identity.jwksRefreshFloorMs,
            })
          : identityProvider.verificationKeys(),
    }),
  });
  return { identityProvider, idTokens };
}
