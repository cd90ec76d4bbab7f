import { z } from 'zod';
import { toolResult } from '../tool-result.ts';
import { annotations, defined, type RegisterTool } from './tool.ts';

/** `get_account`: the alias and credit balances an agent reads before it spends anything. */
export const registerGetAccount: RegisterTool = (server, { account, run }) => {
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
      // The request's authentication read the balances with the token, a moment ago and in the
      // same round trip: no second query.
      run(async () =>
        toolResult({ alias: account.alias, credit_balances: [...account.creditBalances] }),
      ),
  );
};
