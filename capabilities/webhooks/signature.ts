import { createHmac, randomBytes } from 'node:crypto';

/**
 * Signatures of task webhooks, as Standard Webhooks defines them
 * (https://www.standardwebhooks.com, the scheme Svix uses; docs/webhooks.md):
 *
 *   signed content = `${webhook-id}.${webhook-timestamp}.${body}`
 *   signature      = base64(HMAC-SHA256(key, signed content))
 *   key            = the base64 bytes after the secret's `whsec_` prefix
 *   header         = `webhook-signature: v1,<signature>` (several, space-separated, while a rotated secret is still valid)
 */
export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + 32 random bytes in base64. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** One `v1,<base64>` signature of a delivery. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The `webhook-signature` header: one signature per valid secret (the current one first). */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets.map((s) => sign(s, id, timestamp, body)).join(' ');
}
