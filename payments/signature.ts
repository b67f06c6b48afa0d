import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signatures the way Stripe signs them: header
 * `processor-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
 * A signature older than the tolerance is refused (replayed captures).
 */
export const SIGNATURE_HEADER = 'processor-signature';
export const SIGNATURE_TOLERANCE_S = 300;

export function signPayload(secret: string, rawBody: string, nowS = Math.floor(Date.now() / 1000)): string {
  const mac = createHmac('sha256', secret).update(`${nowS}.${rawBody}`).digest('hex');
  return `t=${nowS},v1=${mac}`;
}

/** Null when the header is a valid, fresh signature of this body; otherwise why not. */
export function signatureProblem(secret: string, rawBody: string, header: string, nowS = Math.floor(Date.now() / 1000)): string | null {
  const parts = Object.fromEntries(header.split(',').map((p) => p.trim().split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || !parts.v1) return 'malformed signature header';
  if (Math.abs(nowS - t) > SIGNATURE_TOLERANCE_S) return 'signature timestamp outside the tolerance';
  const want = Buffer.from(createHmac('sha256', secret).update(`${t}.${rawBody}`).digest('hex'));
  const got = Buffer.from(String(parts.v1));
  return want.length === got.length && timingSafeEqual(want, got) ? null : 'signature does not match';
}

export function webhookSecret(config: { PAYMENT_WEBHOOK_SECRET?: string; ADMIN_TOKEN: string }): string {
  return config.PAYMENT_WEBHOOK_SECRET ?? createHmac('sha256', config.ADMIN_TOKEN).update('payment-webhook').digest('hex');
}
