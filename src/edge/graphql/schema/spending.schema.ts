import type { GenerationKind } from '../../../domain/model.ts';
import type { SpendingLimits } from '../../../domain/spending-limits.ts';
import type {
  CreditLimitView,
  SpendingLimitsView,
} from '../../../services/spending-limit.service.ts';
import type { Builder } from '../builder.ts';
import type { SharedTypes } from './shared-types.schema.ts';

/**
 * Spending limits of API keys and MCP connections (additions to the contract): the types both
 * show, and the input both take.
 */
export function addSpendingTypes(builder: Builder, shared: SharedTypes) {
  const LimitPeriod = builder.enumType('LimitPeriod', {
    description: 'A calendar period in UTC: a day from midnight, a month from its first day.',
    values: ['day', 'month'] as const,
  });

  const CreditLimit = builder.objectRef<CreditLimitView>('CreditLimit').implement({
    fields: (t) => ({
      category: t.exposeString('category'),
      period: t.field({ type: LimitPeriod, resolve: (l) => l.period }),
      credits: t.exposeInt('credits', { description: 'The most that may be spent per period.' }),
      spent: t.exposeInt('spent', { description: 'Spent in the current period, net of refunds.' }),
      remaining: t.exposeInt('remaining'),
      resetsAt: t.expose('resetsAt', { type: 'DateTime' }),
    }),
  });

  const SpendingLimitsRef = builder.objectRef<SpendingLimitsView>('SpendingLimits').implement({
    fields: (t) => ({
      credits: t.field({ type: [CreditLimit], resolve: (l) => [...l.credits] }),
      kinds: t.field({
        type: [shared.GenerationKind],
        nullable: true,
        description: 'The kinds it may generate; null: every kind.',
        resolve: (l) => (l.kinds === null ? null : [...l.kinds]),
      }),
      modelIds: t.field({
        type: ['ID'],
        nullable: true,
        description: 'The models it may use; null: every model of the account.',
        resolve: (l) => (l.modelIds === null ? null : [...l.modelIds]),
      }),
    }),
  });

  const CreditLimitInput = builder.inputType('CreditLimitInput', {
    fields: (t) => ({
      category: t.string({ required: true }),
      period: t.field({ type: LimitPeriod, required: true }),
      credits: t.int({ required: true }),
    }),
  });

  const SpendingLimitsInput = builder.inputType('SpendingLimitsInput', {
    description: 'Replaces every limit of the credential.',
    fields: (t) => ({
      credits: t.field({
        type: [CreditLimitInput],
        description: 'Credits per category per period.',
      }),
      kinds: t.field({ type: [shared.GenerationKind], description: 'Left out: every kind.' }),
      modelIds: t.idList({ description: 'Left out: every model.' }),
    }),
  });

  return { SpendingLimitsRef, SpendingLimitsInput };
}

export type SpendingTypes = ReturnType<typeof addSpendingTypes>;

/** The GraphQL input as the services take it (lists left out allow everything). */
export function spendingLimitsOf(
  input:
    | {
        credits?: readonly { category: string; period: 'day' | 'month'; credits: number }[] | null;
        kinds?: readonly GenerationKind[] | null;
        modelIds?: readonly (string | number)[] | null;
      }
    | null
    | undefined,
): SpendingLimits | null {
  if (input === null || input === undefined) return null;
  return {
    credits: input.credits ?? [],
    kinds: input.kinds ?? null,
    modelIds: input.modelIds?.map(String) ?? null,
  };
}
