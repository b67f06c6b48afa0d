import { addressRange, checkHttpUrl, checkPublicHttpUrl, hostOf } from '../../domain/url-policy';

export { hostOf };

/**
 * Which task callback URLs the gateway will POST to (docs/webhooks.md).
 *
 * - production: `https://` to a public host only (the URL policy of
 *   domain/url-policy.ts: no loopback, private, link-local, unique-local,
 *   CGNAT or unspecified address in any notation, no local names, no
 *   credentials in the URL);
 * - development and test: the same, and also loopback hosts (`127.0.0.0/8`,
 *   `[::1]`, `localhost`) over http or https, so a receiver on this machine
 *   works. Private and link-local addresses are refused in every mode.
 *
 * Checked at submission (400 naming `callback_url`) and again at delivery
 * time on the addresses the host resolves to (capabilities/webhooks/resolve.ts): a name
 * may point somewhere else by then.
 */
export type DeploymentMode = 'production' | 'development' | 'test';

export const MAX_CALLBACK_URL_LENGTH = 2048;

/** The task families whose submissions take a `callback_url`, by task kind (the async ones; voices and transcripts answer synchronously). */
export const CALLBACK_KINDS: ReadonlySet<string> = new Set(['image', 'video', 'music', 'speech', 'avatar']);

export type CallbackVerdict = { ok: true; url: URL } | { ok: false; reason: string };

const LOOPBACK_NAME = /(^|\.)localhost$/i;

/** True for an address in 127.0.0.0/8 or ::1 (IPv4-mapped forms included). */
export function isLoopbackAddress(address: string): boolean {
  return addressRange(address) === 'loopback';
}

/** May a delivery reach this resolved address in this mode? (public unicast always; loopback outside production) */
export function addressAllowed(address: string, mode: DeploymentMode): { ok: true } | { ok: false; reason: string } {
  const range = addressRange(address);
  if (range === null) return { ok: false, reason: `resolved to an unreadable address ${address}` };
  if (mode !== 'production' && range === 'loopback') return { ok: true };
  return range === 'unicast' ? { ok: true } : { ok: false, reason: `resolves to a ${range} address (${address})` };
}

export function checkCallbackUrl(value: unknown, mode: DeploymentMode): CallbackVerdict {
  if (typeof value !== 'string' || value === '') return { ok: false, reason: 'must be a non-empty string' };
  if (value.length > MAX_CALLBACK_URL_LENGTH) return { ok: false, reason: `must be at most ${MAX_CALLBACK_URL_LENGTH} characters` };
  const parsed = checkHttpUrl(value, mode === 'production' ? 'must use https' : 'must use https (or http to a loopback receiver, outside production)');
  if (!parsed.ok) return parsed;
  const url = parsed.url;
  const host = hostOf(url);
  const loopback = isLoopbackAddress(host) || LOOPBACK_NAME.test(host);
  if (loopback) {
    return mode === 'production'
      ? { ok: false, reason: 'points to a loopback address; production deliveries go to public https hosts only' }
      : { ok: true, url };
  }
  const policy = checkPublicHttpUrl(value);
  if (!policy.ok) return { ok: false, reason: `${policy.reason}; callbacks go to public hosts only` };
  if (url.protocol !== 'https:') {
    return { ok: false, reason: mode === 'production' ? 'must use https' : 'must use https (http is allowed for loopback receivers only, outside production)' };
  }
  return { ok: true, url };
}
