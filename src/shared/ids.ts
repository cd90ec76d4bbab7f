import { randomInt } from 'node:crypto';

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` characters from [0-9A-Za-z], each uniformly random (no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += base62[randomInt(62)];
  return out;
}

/** Encodes a non-negative integer in base 62, left-padded with '0' to `width`. */
export function encodeBase62(value: number, width: number): string {
  let out = '';
  let rest = value;
  while (rest > 0) {
    out = base62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out.padStart(width, '0');
}

/** The readable type prefixes of DESIGN.md "Identifiers". */
export type IdPrefix =
  | 'acc'
  | 'key'
  | 'led'
  | 'cnt'
  | 'tsk'
  | 'med'
  | 'mdl'
  | 'elm'
  | 'ava'
  | 'upl'
  | 'usr'
  | 'whe'
  | 'msg';

/**
 * A new opaque identifier such as `acc_3kT9…`: 22 base-62 characters carry about 131 random
 * bits, above the 96 that DESIGN.md asks for, so an identifier can never be guessed.
 */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(22)}`;
}
