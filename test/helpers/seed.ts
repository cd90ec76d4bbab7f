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
  options: { credits?: Record<string, number>; apiKeyAccess?: boolean } = {},
): Promise<SeededAccount> {
  const account = await core.services.accounts.create({
    alias: `user-${randomBytes(5).toString('hex')}`,
    apiKeyAccess: true,
    credits: options.credits ?? { standard: 100 },
  });
  const key = await core.services.apiKeys.issue(account.id, { name: 'test' });
  if (options.apiKeyAccess === false) {
    // Keys are issued only with access enabled; turn it off afterwards for the test's purpose.
    await core.services.accounts.update(account.id, { apiKeyAccess: false });
  }
  return { account, apiKey: key.secret, apiKeyId: key.apiKey.id };
}
