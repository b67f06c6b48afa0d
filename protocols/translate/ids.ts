import { randomBytes } from 'node:crypto';

/** A fresh id with the vendor's prefix, for objects an upstream did not name (`call_...`, `msg_...`). */
export function newId(prefix: string): string {
  return prefix + randomBytes(12).toString('base64url');
}

export function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}
