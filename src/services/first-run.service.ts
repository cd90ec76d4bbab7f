import type { BuiltinIdentityProvider } from '../auth/builtin-idp.ts';
import { randomBase62 } from '../shared/ids.ts';
import { countAccounts } from '../store/account.store.ts';
import type { Db } from '../store/database.ts';
import type { AccountService, UserProfile } from './account.service.ts';
import type { ApiKeyService } from './api-key.service.ts';

export interface FirstRun {
  account: UserProfile;
  /** The admin's first API key, to be shown once. */
  apiKeySecret: string;
  /** The admin's sign-in with the built-in identity provider, to be shown once. */
  signIn: { email: string; password: string } | null;
}

export const firstRunCredits = 1_000;

/**
 * On an empty embedded database, opens the `admin` account (API-key access, 1,000 `standard`
 * credits), its first key and a sign-in for the built-in identity provider, so a newcomer can call the API right after `npm start`
 * (DESIGN.md "First run"). Returns null when the database already has accounts.
 */
export async function ensureFirstRun(deps: {
  db: Db;
  accounts: AccountService;
  apiKeys: ApiKeyService;
  identityProvider: BuiltinIdentityProvider | null;
}): Promise<FirstRun | null> {
  if ((await countAccounts(deps.db)) > 0) return null;
  const account = await deps.accounts.create({
    alias: 'admin',
    role: 'admin',
    apiKeyAccess: true,
    credits: { standard: firstRunCredits },
  });
  const key = await deps.apiKeys.issue(account.id, { name: 'first run' });
  let signIn: FirstRun['signIn'] = null;
  if (deps.identityProvider !== null) {
    signIn = { email: 'admin@localhost', password: randomBase62(20) };
    await deps.identityProvider.addUser({ accountId: account.id, ...signIn });
  }
  return { account, apiKeySecret: key.secret, signIn };
}
