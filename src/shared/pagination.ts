import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
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

/** Writes and reads the cursors of one list for one caller. */
export interface CursorCodec {
  encode(value: unknown): string;
  /** The position inside, or 120001 naming `after`. */
  decode<T>(cursor: string, isValid: (value: unknown) => value is T): T;
}

const ivBytes = 12; // 96-bit nonce, GCM's own size
const tagBytes = 16;

/**
 * Opaque page cursors, bound to whoever received them: the position is sealed with
 * AES-256-GCM under a server key (shared by every node), with the list and the caller's
 * account as associated data. A cursor given to another account (or to an anonymous caller),
 * made for another list, altered or made up does not open and is 120001 on `after`; nothing
 * inside (offsets, timestamps, IDs) is readable, so clients cannot depend on it.
 */
export class Cursors {
  readonly #key: Buffer;

  constructor(key: Uint8Array) {
    if (key.length !== 32) throw new Error('the cursor key must be 32 bytes');
    this.#key = Buffer.from(key);
  }

  /** The codec of `list` for the account (null: anonymous callers, who share one scope). */
  for(accountId: string | null, list: string): CursorCodec {
    const aad = Buffer.from(`${list}\0${accountId ?? ''}`);
    const key = this.#key;
    return {
      encode(value) {
        const iv = randomBytes(ivBytes);
        const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(aad);
        const sealed = Buffer.concat([cipher.update(JSON.stringify(value)), cipher.final()]);
        return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url');
      },
      decode(cursor, isValid) {
        try {
          const bytes = Buffer.from(cursor, 'base64url');
          if (bytes.length > ivBytes + tagBytes) {
            const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, ivBytes))
              .setAAD(aad)
              .setAuthTag(bytes.subarray(bytes.length - tagBytes));
            const opened = Buffer.concat([
              decipher.update(bytes.subarray(ivBytes, bytes.length - tagBytes)),
              decipher.final(),
            ]);
            const value: unknown = JSON.parse(opened.toString('utf8'));
            if (isValid(value)) return value;
          }
        } catch {
          // not sealed by us for this caller and list: the same answer as garbage
        }
        throw new AppError(
          ErrorCode.InvalidInput,
          'after: not a cursor this list gave to this caller; start again without it',
          { field: 'after' },
        );
      },
    };
  }
}

/** A page of an in-memory list (the catalogue), with an offset cursor. */
export function pageOf<T>(
  items: readonly T[],
  first: number | null | undefined,
  after: string | null | undefined,
  cursors: CursorCodec,
): Page<T> {
  const size = pageSize(first, 50);
  const start =
    after == null
      ? 0
      : cursors.decode(after, (v): v is { o: number } =>
          Number.isInteger((v as { o?: unknown })?.o),
        ).o;
  const nodes = items.slice(start, start + size);
  const end = start + nodes.length;
  return {
    nodes,
    pageInfo: {
      hasNextPage: end < items.length,
      endCursor: nodes.length > 0 ? cursors.encode({ o: end }) : null,
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

/** Where a list read newest first by (created_at, id) resumes: the position `after` names. */
export function timeIdPosition(
  cursors: CursorCodec,
  after: string | null | undefined,
): { createdAt: Date; id: string } | null {
  if (after == null) return null;
  const cursor = cursors.decode(after, isTimeIdCursor);
  return { createdAt: new Date(cursor.t), id: cursor.id };
}

/**
 * The page info of such a list, from the rows read: up to `size + 1` of them (one more than
 * the page says whether another follows). `positionOf` gives a row's (created_at, id).
 */
export function timeIdPageInfo<R>(
  rows: readonly R[],
  size: number,
  cursors: CursorCodec,
  positionOf: (row: R) => { createdAt: Date; id: string },
): Page<unknown>['pageInfo'] {
  const last = rows[Math.min(rows.length, size) - 1];
  if (last === undefined) return { hasNextPage: false, endCursor: null };
  const { createdAt, id } = positionOf(last);
  return {
    hasNextPage: rows.length > size,
    endCursor: cursors.encode({ t: createdAt.toISOString(), id }),
  };
}
