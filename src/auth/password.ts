import { hash, verify } from '@node-rs/argon2';

// Algorithm.Argon2id of @node-rs/argon2 (a const enum, which type stripping cannot inline).
const argon2id = 2;
/** OWASP's argon2id baseline: 19 MiB, 2 iterations, 1 lane. */
const options = { algorithm: argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, options);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** A hash of nothing anyone knows, verified for unknown users so they take as long as known ones. */
export const decoyHash = hashPassword(crypto.randomUUID());
