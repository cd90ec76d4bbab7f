import { type UsageRow, usageDimensions } from '../../../domain/usage.ts';
import type { Builder } from '../builder.ts';
import { requireActor } from '../context.ts';
import type { SharedTypes } from './shared-types.schema.ts';

type Finish = UsageRow['finishes'][number];

/** The usage report (an addition to the contract, issue 32): one query, GET /usage.csv too. */
export function addUsageSchema(builder: Builder, shared: SharedTypes): void {
  const Dimension = builder.enumType('UsageDimension', {
    description:
      'What a usage report groups by: DAY (the UTC day of submission), ACCOUNT, MODEL, KIND, BACKEND (submissions count on their task’s last run’s backend, provider calls and failures on each run’s own; null for built-in engines), CREDENTIAL (the API key’s ID, mcp:<client ID>, or null for a signed-in person).',
    values: Object.fromEntries(usageDimensions.map((d) => [d.toUpperCase(), { value: d }])),
  });

  const FinishCount = builder.objectRef<Finish>('UsageFinishCount').implement({
    fields: (t) => ({
      code: t.exposeInt('code', { description: 'A finishCode, as getTask answers it.' }),
      count: t.exposeInt('count'),
    }),
  });

  const Row = builder.objectRef<UsageRow>('UsageRow').implement({
    description:
      'The submissions of one group, each attributed to the day it was submitted (UTC); dimensions not grouped by are null.',
    fields: (t) => ({
      day: t.expose('day', { type: 'DateTime', nullable: true }),
      accountId: t.exposeID('accountId', { nullable: true }),
      modelId: t.exposeID('modelId', { nullable: true }),
      kind: t.field({ type: shared.GenerationKind, nullable: true, resolve: (r) => r.kind }),
      backend: t.exposeString('backend', { nullable: true }),
      credential: t.exposeString('credential', { nullable: true }),
      submissions: t.exposeInt('submissions'),
      finishes: t.field({
        type: [FinishCount],
        description: 'Finished tasks by finish code; the rest are still queued or running.',
        resolve: (r) => [...r.finishes],
      }),
      creditsCharged: t.exposeFloat('creditsCharged', {
        description: 'Whole credits, every category (a Float: a year’s sum may pass 2³¹).',
      }),
      creditsRefunded: t.exposeFloat('creditsRefunded'),
      runSeconds: t.exposeFloat('runSeconds', {
        description: 'Of finished tasks: from the first claim to the finish, retries included.',
      }),
      providerCalls: t.exposeInt('providerCalls', {
        description: 'Runs on a pool’s backends; built-in engines record none.',
      }),
      providerFailures: t.exposeInt('providerFailures', {
        description: 'Of those runs, the ones that did not end ok.',
      }),
    }),
  });

  const Filter = builder.inputType('UsageFilter', {
    fields: (t) => ({
      accountId: t.id({ description: 'Admins only; anyone else’s own report is theirs alone.' }),
      modelId: t.id(),
      kind: t.field({ type: shared.GenerationKind }),
      backend: t.string(),
      credential: t.string({ description: 'An API key’s ID, or mcp:<client ID>.' }),
    }),
  });

  builder.queryField('usageReport', (t) =>
    t.field({
      type: [Row],
      nullable: true,
      description:
        'Submissions in [from, to) (at most 366 days), grouped: the caller’s own, or for an admin everyone’s. Also GET /usage.csv.',
      args: {
        from: t.arg({ type: 'DateTime', required: true }),
        to: t.arg({ type: 'DateTime', required: true }),
        groupBy: t.arg({ type: [Dimension], required: true }),
        filter: t.arg({ type: Filter }),
      },
      resolve: (_root, args, ctx) =>
        ctx.services.usage.report(requireActor(ctx), {
          from: args.from,
          to: args.to,
          groupBy: args.groupBy as string[],
          filter: args.filter && {
            accountId: args.filter.accountId?.toString(),
            modelId: args.filter.modelId?.toString(),
            kind: args.filter.kind ?? undefined,
            backend: args.filter.backend ?? undefined,
            credential: args.filter.credential ?? undefined,
          },
        }),
    }),
  );
}
