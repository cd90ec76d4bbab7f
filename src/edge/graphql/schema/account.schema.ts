import type { CreditBalance, UserProfile } from '../../../services/account.service.ts';
import type { Builder } from '../builder.ts';
import { requireActor } from '../context.ts';

export function addAccountSchema(builder: Builder) {
  const CreditBalanceRef = builder.objectRef<CreditBalance>('CreditBalance').implement({
    fields: (t) => ({
      category: t.exposeString('category'),
      amount: t.exposeInt('amount'),
    }),
  });

  const UserRef = builder.objectRef<UserProfile>('User').implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      alias: t.exposeString('alias', { nullable: true }),
      creditBalances: t.expose('creditBalances', { type: [CreditBalanceRef] }),
      apiKeyAccess: t.exposeBoolean('apiKeyAccess'),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
    }),
  });

  builder.queryField('getUserByPrivateId', (t) =>
    t.field({
      type: UserRef,
      nullable: true,
      description: 'The authenticated account. Requires a credential (error 100101 without one).',
      resolve: (_root, _args, ctx) => ctx.services.accounts.getProfile(requireActor(ctx)),
    }),
  );
  return { CreditBalanceRef };
}
