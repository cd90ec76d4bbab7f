import { crc32 } from 'node:zlib';
import { encodeBase62, randomBase62 } from '../shared/ids.ts';
import { sha256Hex } from '../shared/secrets.ts';

/**
 * API keys are `svc_` + 32 characters from [A-Za-z0-9] (spec §2, §5.1): 26 random characters
 * (about 155 bits) and a 6-character base-62 CRC32 of everything before it. The checksum lets
 * a mistyped or truncated key be refused without touching the database.
 */
const keyPrefix = 'svc_';
const randomLength = 26;
const checksumLength = 6;
const shape = /^svc_[A-Za-z0-9]{32}$/;

/** Characters of the key shown in listings so a person can recognise it. */
const visiblePrefixLength = keyPrefix.length + 4;

export interface GeneratedApiKey {
  /** The full key: shown once, never stored. */
  secret: string;
  /** e.g. `svc_ab12` — stored and listed. */
  prefix: string;
  secretHash: string;
}

export function generateApiKey(): GeneratedApiKey {
  const body = keyPrefix + randomBase62(randomLength);
  const secret = body + checksumOf(body);
  return { secret, prefix: secret.slice(0, visiblePrefixLength), secretHash: hashApiKey(secret) };
}

/** True when `candidate` has the key's shape and a matching checksum. */
export function isWellFormedApiKey(candidate: string): boolean {
  if (!shape.test(candidate)) return false;
  const body = candidate.slice(0, keyPrefix.length + randomLength);
  return candidate.slice(body.length) === checksumOf(body);
}

/**
 * SHA-256 is enough here: the key carries ~155 random bits, so a slow password hash would
 * only slow every request without making a stolen hash any easier to reverse.
 */
export function hashApiKey(secret: string): string {
  return sha256Hex(secret);
}

function checksumOf(body: string): string {
  return encodeBase62(crc32(body), checksumLength);
}
