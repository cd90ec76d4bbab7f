import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ivBytes = 12;
const tagBytes = 16;

/**
 * Secrets the server must use again in clear (a webhook signing secret), kept sealed at rest:
 * AES-256-GCM under a server key, bound to what they belong to (`aad`), so a sealed value
 * copied to another row does not open.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Uint8Array) {
    if (key.length !== 32) throw new Error('the secret box key must be 32 bytes');
    this.#key = Buffer.from(key);
  }

  seal(secret: string, aad: string): string {
    const iv = randomBytes(ivBytes);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv).setAAD(Buffer.from(aad));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url');
  }

  open(sealed: string, aad: string): string {
    const bytes = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, bytes.subarray(0, ivBytes))
      .setAAD(Buffer.from(aad))
      .setAuthTag(bytes.subarray(bytes.length - tagBytes));
    return Buffer.concat([
      decipher.update(bytes.subarray(ivBytes, bytes.length - tagBytes)),
      decipher.final(),
    ]).toString('utf8');
  }
}
