import * as crypto from 'node:crypto';
import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * AES-256-GCM for stored API keys, channel and webhook secrets; sha256 for the lookup index.
 * Every value sealed here names the key that sealed it (`kid`, the key's id: keyId), so a
 * keyring (KEY_ENCRYPTION_KEY, then KEY_ENCRYPTION_KEYS_PREVIOUS) opens values of every key
 * still in it, and `npm run reseal` (dev/scripts/reseal.ts) finds the ones not yet under the
 * current key. Values sealed before key ids (no `kid`) are tried with each key of the ring.
 */
export interface Sealed {
  iv: string;
  tag: string;
  data: string;
  /** Id of the key that sealed it (keyId); absent on values sealed before key ids. */
  kid?: string;
}

/** A key's id: `k` and the first 12 hex digits of sha256 over the key (names it without revealing it). */
export function keyId(keyHex: string): string {
  return `k${sha256Hex(`model-gateway-key-id:${keyHex.toLowerCase()}`).slice(0, 12)}`;
}

export class UnknownSealingKeyError extends Error {
  constructor(readonly kid: string, readonly known: string[]) {
    super(`sealed with key ${kid}, which is not in KEY_ENCRYPTION_KEY or KEY_ENCRYPTION_KEYS_PREVIOUS (ids there: ${known.join(', ')})`);
    this.name = 'UnknownSealingKeyError';
  }
}

export function seal(plaintext: string, keyHex: string): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(keyHex, 'hex'), iv);
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64'), kid: keyId(keyHex) };
}

function openWith(sealed: Sealed, keyHex: string): string {
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(keyHex, 'hex'), Buffer.from(sealed.iv, 'base64'));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8');
}

/**
 * Opens a sealed value with one key or a keyring (current key first). A value naming its key is
 * opened with that key only; an older value without `kid` with each key in turn (GCM's tag tells
 * a wrong key). Throws UnknownSealingKeyError when the named key is not in the ring.
 */
export function unseal(sealed: Sealed, keys: string | readonly string[]): string {
  const ring = typeof keys === 'string' ? [keys] : keys;
  if (sealed.kid) {
    const key = ring.find((k) => keyId(k) === sealed.kid);
    if (!key) throw new UnknownSealingKeyError(sealed.kid, ring.map(keyId));
    return openWith(sealed, key);
  }
  let last: unknown;
  for (const key of ring) {
    try {
      return openWith(sealed, key);
    } catch (err) {
      last = err;
    }
  }
  throw last ?? new Error('no key to unseal with');
}

/** The keyring of a configuration: the current key, then the previous ones (still readable until re-sealed). */
export function keyRing(config: { KEY_ENCRYPTION_KEY: string; KEY_ENCRYPTION_KEYS_PREVIOUS?: readonly string[] }): string[] {
  return [config.KEY_ENCRYPTION_KEY, ...(config.KEY_ENCRYPTION_KEYS_PREVIOUS ?? []).filter((k) => k.toLowerCase() !== config.KEY_ENCRYPTION_KEY.toLowerCase())];
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
