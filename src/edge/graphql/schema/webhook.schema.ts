import { webhookEventTypes } from '../../../domain/webhooks.ts';
import type {
  CreatedWebhookSecret,
  WebhookDeliveryView,
  WebhookEndpointView,
} from '../../../services/webhook.service.ts';
import type { Builder } from '../builder.ts';
import { requireActor } from '../context.ts';

type Attempt = WebhookDeliveryView['attempts'][number];

/** Webhook endpoints, their delivery log and replays (additions to the contract, issue 21). */
export function addWebhookSchema(builder: Builder) {
  const EventType = builder.enumType('WebhookEventType', {
    description:
      'The type of a delivery, with _ for its dot: task_finished (finishCode 0), task_failed (any other code but 2), task_cancelled (code 2), credits_low (a balance fell below the endpoint’s creditsLowBelow), webhook_disabled (an endpoint of the account was disabled).',
    values: Object.fromEntries(
      webhookEventTypes.map((type) => [type.replace('.', '_'), { value: type }]),
    ),
  });

  const Endpoint = builder.objectRef<WebhookEndpointView>('WebhookEndpoint').implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      url: t.exposeString('url'),
      description: t.exposeString('description'),
      events: t.field({ type: [EventType], resolve: (e) => e.events as never[] }),
      enabled: t.exposeBoolean('enabled'),
      creditsLowBelow: t.exposeInt('creditsLowBelow', {
        description: 'credits_low fires when a balance falls from at or above this to below it.',
      }),
      disabledAt: t.expose('disabledAt', { type: 'DateTime', nullable: true }),
      disabledReason: t.exposeString('disabledReason', {
        nullable: true,
        description: 'Why it is disabled: by the account, or after a day of failed deliveries.',
      }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
    }),
  });

  const Created = builder.objectRef<CreatedWebhookSecret>('WebhookEndpointSecret').implement({
    fields: (t) => ({
      endpoint: t.field({ type: Endpoint, resolve: (c) => c.endpoint }),
      secret: t.exposeString('secret', {
        description: 'whsec_…: verifies the webhook-signature header. Shown once.',
      }),
    }),
  });

  const AttemptRef = builder.objectRef<Attempt>('WebhookAttempt').implement({
    fields: (t) => ({
      at: t.expose('at', { type: 'DateTime' }),
      statusCode: t.exposeInt('statusCode', { nullable: true }),
      latencyMs: t.exposeInt('latencyMs'),
      error: t.exposeString('error', { nullable: true }),
      responseExcerpt: t.exposeString('responseExcerpt', {
        nullable: true,
        description: 'The first KiB of what the endpoint answered.',
      }),
    }),
  });

  const Delivery = builder.objectRef<WebhookDeliveryView>('WebhookDelivery').implement({
    fields: (t) => ({
      id: t.exposeID('id', { description: 'The webhook-id header: the same on every attempt.' }),
      eventType: t.exposeString('eventType'),
      payload: t.field({ type: 'JSON', resolve: (d) => d.payload }),
      state: t.exposeString('state', { description: 'pending, delivered or failed.' }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      deliveredAt: t.expose('deliveredAt', { type: 'DateTime', nullable: true }),
      nextAttemptAt: t.expose('nextAttemptAt', { type: 'DateTime', nullable: true }),
      attempts: t.field({ type: [AttemptRef], resolve: (d) => d.attempts }),
    }),
  });

  const CreateInput = builder.inputType('CreateWebhookEndpointInput', {
    fields: (t) => ({
      url: t.string({ required: true, description: 'A public https URL.' }),
      events: t.field({ type: [EventType], required: true }),
      description: t.string(),
      creditsLowBelow: t.int({ description: 'The credits_low threshold (default 100).' }),
    }),
  });

  const UpdateInput = builder.inputType('UpdateWebhookEndpointInput', {
    fields: (t) => ({
      url: t.string(),
      events: t.field({ type: [EventType] }),
      description: t.string(),
      enabled: t.boolean({ description: 'true also sends what waited while it was disabled.' }),
      creditsLowBelow: t.int(),
    }),
  });

  builder.queryFields((t) => ({
    listWebhookEndpoints: t.field({
      type: [Endpoint],
      nullable: true,
      resolve: (_root, _args, ctx) => ctx.services.webhooks.list(requireActor(ctx)),
    }),
    oneOffWebhookEndpoint: t.field({
      type: Endpoint,
      nullable: true,
      description:
        'The endpoint whose secret signs deliveries to generations’ own webhookUrl (its id lists them); null until rotateOneOffWebhookSecret made it.',
      resolve: (_root, _args, ctx) => ctx.services.webhooks.oneOffEndpoint(requireActor(ctx)),
    }),
    listWebhookDeliveries: t.field({
      type: [Delivery],
      nullable: true,
      description: "An endpoint's newest deliveries, each with its attempts.",
      args: { endpointId: t.arg.id({ required: true }), first: t.arg.int({ defaultValue: 20 }) },
      resolve: (_root, { endpointId, first }, ctx) =>
        ctx.services.webhooks.deliveries(requireActor(ctx), endpointId, first ?? 20),
    }),
  }));

  builder.mutationFields((t) => ({
    createWebhookEndpoint: t.field({
      type: Created,
      nullable: true,
      args: { input: t.arg({ type: CreateInput, required: true }) },
      resolve: (_root, { input }, ctx) =>
        ctx.services.webhooks.create(requireActor(ctx), {
          url: input.url,
          events: input.events as string[],
          description: input.description ?? undefined,
          creditsLowBelow: input.creditsLowBelow ?? undefined,
        }),
    }),
    updateWebhookEndpoint: t.field({
      type: Endpoint,
      nullable: true,
      args: {
        endpointId: t.arg.id({ required: true }),
        input: t.arg({ type: UpdateInput, required: true }),
      },
      resolve: (_root, { endpointId, input }, ctx) =>
        ctx.services.webhooks.update(requireActor(ctx), endpointId, {
          url: input.url ?? undefined,
          events: (input.events as string[] | null | undefined) ?? undefined,
          description: input.description ?? undefined,
          enabled: input.enabled ?? undefined,
          creditsLowBelow: input.creditsLowBelow ?? undefined,
        }),
    }),
    deleteWebhookEndpoint: t.field({
      type: Endpoint,
      nullable: true,
      args: { endpointId: t.arg.id({ required: true }) },
      resolve: (_root, { endpointId }, ctx) =>
        ctx.services.webhooks.delete(requireActor(ctx), endpointId),
    }),
    rotateWebhookSecret: t.field({
      type: Created,
      nullable: true,
      description: 'A new secret, shown once; the old one keeps signing beside it for 24 hours.',
      args: { endpointId: t.arg.id({ required: true }) },
      resolve: (_root, { endpointId }, ctx) =>
        ctx.services.webhooks.rotateSecret(requireActor(ctx), endpointId),
    }),
    rotateOneOffWebhookSecret: t.field({
      type: Created,
      nullable: true,
      description:
        'The secret that signs deliveries to a generation’s own webhookUrl: made by the first call, rotated by the next (the old one signs beside it for 24 hours). Shown once.',
      resolve: (_root, _args, ctx) => ctx.services.webhooks.rotateOneOffSecret(requireActor(ctx)),
    }),
    replayWebhookDelivery: t.int({
      nullable: true,
      description: 'Sends a delivery again, with the same webhook-id. Answers 1.',
      args: { deliveryId: t.arg.id({ required: true }) },
      resolve: (_root, { deliveryId }, ctx) =>
        ctx.services.webhooks.replay(requireActor(ctx), deliveryId),
    }),
    replayWebhookDeliveries: t.int({
      nullable: true,
      description: 'Sends again every delivery of the endpoint since a time; answers how many.',
      args: {
        endpointId: t.arg.id({ required: true }),
        since: t.arg({ type: 'DateTime', required: true }),
      },
      resolve: (_root, { endpointId, since }, ctx) =>
        ctx.services.webhooks.replaySince(requireActor(ctx), endpointId, since),
    }),
  }));
  return { WebhookEndpointRef: Endpoint };
}
