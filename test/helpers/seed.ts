import { randomBytes } from 'node:crypto';
import type { Core } from '../../src/core.ts';
import type { UserProfile } from '../../src/services/account.service.ts';

export interface SeededAccount {
  account: UserProfile;
  apiKey: string;
  apiKeyId: string;
}

/** An account with a unique alias and an API key, made through the operator's services. */
export async function seedAccount(
  core: Pick<Core, 'services'>,
  options: {
    credits?: Record<string, number>;
    apiKeyAccess?: boolean;
    role?: 'user' | 'admin';
  } = {},
): Promise<SeededAccount> {
  const account = await core.services.accounts.create({
    alias: `user-${randomBytes(5).toString('hex')}`,
    apiKeyAccess: true,
    credits: options.credits ?? { standard: 100 },
    ...(options.role === undefined ? {} : { role: options.role }),
  });
  const key = await core.services.apiKeys.issue(account.id, { name: 'test' });
  if (options.apiKeyAccess === false) {
    // Keys are issued only with access enabled; turn it off afterwards for the test's purpose.
    await core.services.accounts.update(account.id, { apiKeyAccess: false });
  }
  return { account, apiKey: key.secret, apiKeyId: key.apiKey.id };
}

/**
 * An ID token for the account from the built-in identity provider, as a person signing in gets
 * one: a sign-in is added for the account, then `POST /idp/sign-in`.
 */
export async function idTokenFor(
  t: { url: string } & { app: Pick<Core, 'services'> },
  accountId: string,
): Promise<string> {
  const who = { email: `owner-${accountId}@example.test`, password: 'an owner password' };
  await t.app.services.identityProvider!.addUser({ accountId, ...who });
  const signIn = await fetch(`${t.url}/idp/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(who),
  });
  if (signIn.status !== 200) throw new Error(`sign-in failed: ${await signIn.text()}`);
  return ((await signIn.json()) as { idToken: string }).idToken;
}
