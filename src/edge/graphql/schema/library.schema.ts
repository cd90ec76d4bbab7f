import type { ObjectRef } from '@pothos/core';
import type { ElementDefinition } from '../../../domain/element.ts';
import type { AvatarView } from '../../../services/library.service.ts';
import type { Upload } from '../../../services/upload.service.ts';
import type { VoiceModelView } from '../../../services/voice.service.ts';
import type { Builder, Types } from '../builder.ts';
import { optionalActor, requireActor } from '../context.ts';
import { connectionRef } from './common.schema.ts';
import type { SharedTypes } from './shared-types.schema.ts';

/** What accounts bring to generations: voices, uploads, own elements and avatars. */
export function addLibrarySchema(
  builder: Builder,
  types: SharedTypes,
  ElementRef: ObjectRef<Types, ElementDefinition>,
): void {
  const VoiceModelRef = builder.objectRef<VoiceModelView>('VoiceModel').implement({
    fields: (t) => ({
      voiceModelId: t.exposeID('voiceModelId'),
      name: t.exposeString('name'),
      language: t.exposeString('language'),
      gender: t.exposeString('gender', { nullable: true }),
      variant: t.exposeString('variant', {
        nullable: true,
        description: 'Null for the language’s own voice; e.g. "female" for another timbre of it.',
      }),
      previewMediaId: t.exposeID('previewMediaId', {
        nullable: true,
        description: 'A short sample; getDownloadUrls gives it to any account, free.',
      }),
    }),
  });

  const AvatarRef = builder.objectRef<AvatarView>('Avatar').implement({
    fields: (t) => ({
      avatarId: t.exposeID('avatarId'),
      name: t.exposeString('name'),
      portraitMediaId: t.exposeID('portraitMediaId'),
      voiceModelId: t.exposeID('voiceModelId', { nullable: true }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
    }),
  });

  const UploadRef = builder.objectRef<Upload>('Upload').implement({
    fields: (t) => ({
      mediaId: t.exposeID('mediaId'),
      uploadUrl: t.exposeString('uploadUrl', {
        description:
          'PUT exactly the declared bytes here before expiresAt. The bytes are checked by content: on arrival (Atelier answers with what it found), or, when this URL is on the object store, at the first use of mediaId (a refusal is 120001 there, saying why).',
      }),
      expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    }),
  });

  const VoiceModelConnection = connectionRef(
    builder,
    'VoiceModelConnection',
    VoiceModelRef,
    types.PageInfo,
  );
  const AvatarConnection = connectionRef(builder, 'AvatarConnection', AvatarRef, types.PageInfo);

  const CreateUploadInput = builder.inputType('CreateUploadInput', {
    fields: (t) => ({
      kind: t.field({ type: types.MediaKind, required: true }),
      mimeType: t.string({ required: true }),
      bytes: t.int({ required: true }),
      filename: t.string(),
    }),
  });
  const CreateAvatarInput = builder.inputType('CreateAvatarInput', {
    fields: (t) => ({
      name: t.string({ required: true }),
      portraitMediaId: t.id({ required: true }),
      voiceModelId: t.id(),
    }),
  });
  const CreateElementInput = builder.inputType('CreateElementInput', {
    fields: (t) => ({
      kind: t.field({ type: types.ElementKind, required: true }),
      name: t.string({ required: true }),
      description: t.string(),
      mediaId: t.id({
        required: true,
        description: 'An uploaded or generated image of the account.',
      }),
    }),
  });

  builder.queryFields((t) => ({
    listVoiceModels: t.field({
      type: VoiceModelConnection,
      nullable: true,
      description: 'Voices for speech and avatar generation (public).',
      args: {
        language: t.arg.string({ description: 'A language tag: "en" matches en, en-gb, en-us…' }),
        first: t.arg.int({ defaultValue: 50 }),
        after: t.arg.string(),
      },
      resolve: (_root, args, ctx) =>
        ctx.services.voices.list(optionalActor(ctx), args.language, args.first, args.after),
    }),
    listAvatars: t.field({
      type: AvatarConnection,
      nullable: true,
      description: "The account's avatars.",
      args: { first: t.arg.int({ defaultValue: 50 }), after: t.arg.string() },
      resolve: (_root, args, ctx) =>
        ctx.services.library.listAvatars(requireActor(ctx), args.first, args.after),
    }),
    getAvatar: t.field({
      type: AvatarRef,
      nullable: true,
      args: { avatarId: t.arg.id({ required: true }) },
      resolve: (_root, { avatarId }, ctx) =>
        ctx.services.library.getAvatar(requireActor(ctx), avatarId),
    }),
  }));

  builder.mutationFields((t) => ({
    createUpload: t.field({
      type: UploadRef,
      nullable: true,
      description: 'Registers an upload; the client then PUTs the bytes to `uploadUrl`.',
      args: { input: t.arg({ type: CreateUploadInput, required: true }) },
      resolve: (_root, { input }, ctx) => ctx.services.uploads.create(requireActor(ctx), input),
    }),
    createAvatar: t.field({
      type: AvatarRef,
      nullable: true,
      args: { input: t.arg({ type: CreateAvatarInput, required: true }) },
      resolve: (_root, { input }, ctx) =>
        ctx.services.library.createAvatar(requireActor(ctx), input),
    }),
    deleteAvatar: t.boolean({
      nullable: true,
      args: { avatarId: t.arg.id({ required: true }) },
      resolve: (_root, { avatarId }, ctx) =>
        ctx.services.library.deleteAvatar(requireActor(ctx), avatarId),
    }),
    createElement: t.field({
      type: ElementRef,
      nullable: true,
      args: { input: t.arg({ type: CreateElementInput, required: true }) },
      resolve: (_root, { input }, ctx) =>
        ctx.services.library.createElement(requireActor(ctx), input),
    }),
    deleteElement: t.boolean({
      nullable: true,
      args: { elementId: t.arg.id({ required: true }) },
      resolve: (_root, { elementId }, ctx) =>
        ctx.services.library.deleteElement(requireActor(ctx), elementId),
    }),
  }));
}
