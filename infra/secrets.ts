import * as crypto from 'node:crypto';
import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** AES-256-GCM for stored API keys; sha256 for the lookup index. */
export interface Sealed {
  iv: string;
  tag: string;
  data: string;
}

export function seal(plaintext: string, keyHex: string): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(keyHex, 'hex'), iv);
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
}

export function unseal(sealed: Sealed, keyHex: string): string {
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(keyHex, 'hex'), Buffer.from(sealed.iv, 'base64'));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8');
}

/**
 * One-shot `crypto.hash` (Node >= 20.12) where there is one: every
 * authenticated request hashes its key, and the one-shot form costs about a
 * third of a Hash object's create/update/digest.
 */
const oneShot = typeof crypto.hash === 'function' ? crypto.hash : null;

export function sha256Hex(text: string | Buffer): string {
  return oneShot ? oneShot('sha256', text, 'hex') : createHash('sha256').update(text).digest('hex');
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
