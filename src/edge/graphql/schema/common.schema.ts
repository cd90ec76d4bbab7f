import type { ObjectRef } from '@pothos/core';
import type { Page } from '../../../shared/pagination.ts';
import type { Builder, Types } from '../builder.ts';

export type PageInfoRef = ObjectRef<Types, Page<unknown>['pageInfo']>;

export function addPageInfo(builder: Builder): PageInfoRef {
  return builder.objectRef<Page<unknown>['pageInfo']>('PageInfo').implement({
    fields: (t) => ({
      hasNextPage: t.exposeBoolean('hasNextPage'),
      endCursor: t.exposeString('endCursor', { nullable: true }),
    }),
  });
}

/** `<Name>Connection { nodes: [Node!]! pageInfo: PageInfo! }` of the contract. */
export function connectionRef<T>(
  builder: Builder,
  name: string,
  node: ObjectRef<Types, T>,
  pageInfo: PageInfoRef,
): ObjectRef<Types, Page<T>> {
  return builder.objectRef<Page<T>>(name).implement({
    fields: (t) => ({
      nodes: t.field({ type: [node], resolve: (page) => page.nodes }),
      pageInfo: t.field({ type: pageInfo, resolve: (page) => page.pageInfo }),
    }),
  });
}
