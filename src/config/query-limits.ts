/** How big and how costly one GraphQL document may be (HTTP and WebSocket alike). */
export interface QueryLimits {
  /** Characters of the document. */
  readonly maxLength: number;
  /** Lexical tokens of the document (counted before parsing). */
  readonly maxTokens: number;
  /** Nesting of selections, fragments expanded. */
  readonly maxDepth: number;
  readonly maxAliases: number;
  /** Root fields of one operation. */
  readonly maxRootFields: number;
  /** Each field costs 1, times the page size (`first`) of every list above it. */
  readonly maxCost: number;
  /** `__schema` / `__type` allowed. */
  readonly introspection: boolean;
}
