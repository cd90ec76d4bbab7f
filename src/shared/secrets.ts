import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** SHA-256, hex: how high-entropy secrets (API keys, session ids, codes) are stored. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** `bytes` random bytes as base64url (32 bytes: 256 bits). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** Compares two secrets in constant time (a length difference is not secret). */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
