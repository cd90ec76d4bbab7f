import { kindNames } from '../../../domain/kinds/kinds.ts';
import type { Builder } from '../builder.ts';
import { addPageInfo } from './common.schema.ts';

/** The contract's shared types: enums (lowercase on the wire, like `finished`) and PageInfo. */
export function addSharedTypes(builder: Builder) {
  return {
    PageInfo: addPageInfo(builder),
    GenerationKind: builder.enumType('GenerationKind', {
      values: kindNames,
    }),
    ModelStatus: builder.enumType('ModelStatus', {
      values: ['ready', 'maintenance', 'deprecated'] as const,
    }),
    ElementKind: builder.enumType('ElementKind', {
      values: ['character', 'object', 'style', 'scene'] as const,
    }),
    TaskStatus: builder.enumType('TaskStatus', {
      values: ['queued', 'running', 'finished'] as const,
    }),
    MediaKind: builder.enumType('MediaKind', { values: ['image', 'video', 'audio'] as const }),
  };
}

export type SharedTypes = ReturnType<typeof addSharedTypes>;
