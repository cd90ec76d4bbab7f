import { AppError, ErrorCode, invalidInput } from './errors.ts';

export interface Page<T> {
  readonly nodes: readonly T[];
  readonly pageInfo: { readonly hasNextPage: boolean; readonly endCursor: string | null };
}

export const maxPageSize = 100;

/** Checks `first` (1..100) and returns it. */
export function pageSize(first: number | null | undefined, fallback: number): number {
  const size = first ?? fallback;
  if (!Number.isInteger(size) || size < 1 || size > maxPageSize) {
    throw invalidInput([
      { field: 'first', message: `must be a whole number from 1 to ${maxPageSize}` },
    ]);
  }
  return size;
}

/** Opaque cursors: base64url JSON, so clients cannot depend on what is inside. */
export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function decodeCursor<T>(cursor: string, isValid: (value: unknown) => value is T): T {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (isValid(value)) return value;
  } catch {
    // fall through
  }
  throw new AppError(ErrorCode.InvalidInput, 'after: not a cursor returned by this list', {
    field: 'after',
  });
}

/** A page of an in-memory list (the catalogue), with an offset cursor. */
export function pageOf<T>(
  items: readonly T[],
  first: number | null | undefined,
  after: string | null | undefined,
): Page<T> {
  const size = pageSize(first, 50);
  const start =
    after == null
      ? 0
      : decodeCursor(after, (v): v is { o: number } => Number.isInteger((v as { o?: unknown })?.o))
          .o;
  const nodes = items.slice(start, start + size);
  const end = start + nodes.length;
  return {
    nodes,
    pageInfo: {
      hasNextPage: end < items.length,
      endCursor: nodes.length > 0 ? encodeCursor({ o: end }) : null,
    },
  };
}

/** The cursor of a list ordered by (created_at, id), newest first. */
export interface TimeIdCursor {
  readonly t: string;
  readonly id: string;
}

export function isTimeIdCursor(value: unknown): value is TimeIdCursor {
  const v = value as { t?: unknown; id?: unknown };
  return typeof v?.t === 'string' && !Number.isNaN(Date.parse(v.t)) && typeof v.id === 'string';
}
