import type { ElementDefinition } from '../../../domain/element.ts';
import type { Pricing } from '../../../domain/model.ts';
import type { BackendReport } from '../../../observability/pool-report.ts';
import type { ModelView } from '../../../services/catalogue.service.ts';
import type { Builder } from '../builder.ts';
import { optionalActor } from '../context.ts';
import { modelBackends } from '../model-backends.ts';
import { connectionRef } from './common.schema.ts';
import type { SharedTypes } from './shared-types.schema.ts';

export function addCatalogueSchema(builder: Builder, enums: SharedTypes) {
  const PricingRef = builder.objectRef<Pricing>('Pricing').implement({
    fields: (t) => ({
      unit: t.exposeString('unit', { description: 'image | second | character | request' }),
      credits: t.exposeInt('credits', { description: 'Credits for every `per` units.' }),
      per: t.exposeInt('per', {
        description:
          'How many units the credits buy, started units rounded up (e.g. 100 characters).',
      }),
      category: t.exposeString('category', { nullable: true }),
    }),
  });

  const BackendStateEnum = builder.enumType('BackendState', {
    values: {
      up: { description: 'In rotation.' },
      down: { description: 'Out of rotation until its probe answers (see downUntil).' },
    } as const,
  });

  const ModelBackendRef = builder.objectRef<BackendReport>('ModelBackend').implement({
    description: "One backend of a model's pool, as operators see it (admin accounts only).",
    fields: (t) => ({
      name: t.exposeString('name'),
      engine: t.exposeString('engine'),
      state: t.field({ type: BackendStateEnum, resolve: (b) => b.state }),
      inFlight: t.exposeInt('inFlight', { description: 'Runs holding its slots now.' }),
      maxConcurrent: t.exposeInt('maxConcurrent', {
        nullable: true,
        description: 'Its cap on runs at once; null: unlimited.',
      }),
      priority: t.exposeInt('priority', { description: 'Its tier (1 first).' }),
      weight: t.exposeInt('weight'),
      failures: t.exposeInt('failures', { description: 'Retryable failures in a row.' }),
      downUntil: t.field({
        type: 'DateTime',
        nullable: true,
        description: 'While down: when it is probed again.',
        resolve: (b) => (b.downUntil === null ? null : new Date(b.downUntil)),
      }),
      lastError: t.exposeString('lastError', {
        nullable: true,
        description: "Its last failure's class and detail, keys removed.",
      }),
      changedAt: t.field({
        type: 'DateTime',
        description: 'When it last went down or came back.',
        resolve: (b) => new Date(b.changedAt),
      }),
    }),
  });

  const ModelRef = builder.objectRef<ModelView>('Model').implement({
    fields: (t) => ({
      modelId: t.id({ resolve: (v) => v.model.modelId }),
      name: t.string({ resolve: (v) => v.model.name }),
      kind: t.field({ type: enums.GenerationKind, resolve: (v) => v.model.kind }),
      status: t.field({ type: enums.ModelStatus, resolve: (v) => v.model.status }),
      description: t.string({ nullable: true, resolve: (v) => v.model.description }),
      accessible: t.boolean({
        nullable: true,
        description: 'Whether the authenticated account may use it; null without a credential.',
        resolve: (v) => v.accessible,
      }),
      capabilities: t.field({
        type: 'JSON',
        description: 'The settings it accepts and their allowed combinations.',
        resolve: (v) => v.model.capabilities,
      }),
      pricing: t.field({ type: PricingRef, resolve: (v) => v.model.pricing }),
      backends: t.field({
        type: [ModelBackendRef],
        nullable: true,
        description:
          'Admin accounts only (110202 for others): its backends with their health, runs in flight and caps. Empty for a model on a built-in engine alone, which holds no slots.',
        resolve: (v, _args, ctx) => modelBackends(v.model.modelId, ctx),
      }),
    }),
  });

  const ElementRef = builder.objectRef<ElementDefinition>('Element').implement({
    fields: (t) => ({
      elementId: t.exposeID('elementId'),
      kind: t.field({ type: enums.ElementKind, resolve: (e) => e.kind }),
      name: t.exposeString('name'),
      description: t.exposeString('description', { nullable: true }),
      public: t.boolean({ resolve: (e) => e.accountId === null }),
      previewMediaId: t.exposeID('previewMediaId', { nullable: true }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
    }),
  });

  const ModelConnection = connectionRef(builder, 'ModelConnection', ModelRef, enums.PageInfo);
  const ElementConnection = connectionRef(builder, 'ElementConnection', ElementRef, enums.PageInfo);

  builder.queryFields((t) => ({
    listModels: t.field({
      type: ModelConnection,
      nullable: true,
      description: 'Public catalogue of generation models. `Model.accessible` needs a credential.',
      args: {
        kind: t.arg({ type: enums.GenerationKind }),
        status: t.arg({ type: enums.ModelStatus }),
        first: t.arg.int({ defaultValue: 50 }),
        after: t.arg.string(),
      },
      resolve: (_root, args, ctx) =>
        ctx.services.catalogue.listModels(optionalActor(ctx), args, args.first, args.after),
    }),
    getModel: t.field({
      type: ModelRef,
      nullable: true,
      args: { modelId: t.arg.id({ required: true }) },
      resolve: (_root, { modelId }, ctx) =>
        ctx.services.catalogue.getModel(optionalActor(ctx), modelId),
    }),
    listElements: t.field({
      type: ElementConnection,
      nullable: true,
      description: "Public elements plus, with a credential, the account's own.",
      args: {
        kind: t.arg({ type: enums.ElementKind }),
        first: t.arg.int({ defaultValue: 50 }),
        after: t.arg.string(),
      },
      resolve: (_root, args, ctx) =>
        ctx.services.library.listElements(optionalActor(ctx), args, args.first, args.after),
    }),
    getElement: t.field({
      type: ElementRef,
      nullable: true,
      args: { elementId: t.arg.id({ required: true }) },
      resolve: (_root, { elementId }, ctx) =>
        ctx.services.library.getElement(optionalActor(ctx), elementId),
    }),
  }));
  return { ElementRef, ModelRef };
}
