import { z } from 'zod';
import { defined, toolResult } from '../tool-result.ts';
import { annotations, type RegisterTool } from './tool.ts';

/** `get_account`: the alias and credit balances an agent reads before it spends anything. */
export const registerGetAccount: RegisterTool = (server, { actor, services, run }) => {
  server.registerTool(
    'get_account',
    defined('get_account', () => ({
      title: 'Account and credits',
      description: 'The signed-in Atelier account: its alias and credit balances by category.',
      outputSchema: {
        alias: z.string(),
        credit_balances: z.array(z.object({ category: z.string(), amount: z.number() })),
      },
      annotations: annotations.read,
    })),
    () =>
      run(async () => {
        const profile = await services.accounts.getProfile(actor);
        return toolResult({ alias: profile.alias, credit_balances: profile.creditBalances });
      }),
  );
};
