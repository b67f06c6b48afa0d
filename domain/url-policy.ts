import ipaddr from 'ipaddr.js';
import { z } from 'zod';

/**
 * The one policy for URLs a vendor will fetch on our behalf (reference
 * images, videos, audio, avatars, transcripts, voice clones...): http or
 * https, no credentials in the URL, and a host that is a public name or a
 * public unicast address. The URL is parsed with the WHATWG parser (so
 * decimal, octal and hex IPv4 forms such as `2130706433` or `0x7f.1` arrive
 * as `127.0.0.1`), a trailing dot is dropped (`localhost.`), and addresses
 * are classified by ipaddr.js, IPv4-mapped IPv6 (`[::ffff:7f00:1]`) and
 * IPv4-compatible IPv6 (`::/96`: `[::127.0.0.1]`, `[::7f00:1]`) by the IPv4
 * address they carry. Every range but public unicast is refused:
 * loopback, private, link-local, unique-local, CGNAT, unspecified (`[::]`,
 * `0.0.0.0`), multicast, broadcast, reserved, and the IPv6 ranges that embed
 * an IPv4 address (6to4, Teredo, NAT64).
 *
 * Names are not resolved here (no I/O in the domain, and a resolver's answer
 * can change between our check and the vendor's fetch): names that are local
 * by convention are refused; the rest are the vendor's to fetch.
 */

/** Names that only make sense inside a network. */
const LOCAL_NAMES = /(^|\.)(localhost|local|internal|intranet|lan|home|corp|localdomain|home\.arpa)$/i;

export type UrlVerdict = { ok: true; url: URL } | { ok: false; reason: string };

/** `value` read as fetch reads it (the WHATWG parser), or null when it is not a URL: the project's one URL parser. */
export function parseUrl(value: string): URL | null {
  return URL.parse(value);
}

/** The URL's host without brackets or a trailing dot, lower case. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '').toLowerCase();
}

/**
 * An IPv6 address of the deprecated IPv4-compatible block `::/96` (`::a.b.c.d`,
 * RFC 4291 2.5.5.1), other than `::` and `::1`, which ipaddr.js names itself:
 * ipaddr.js calls the rest `unicast`, while stacks that still route them reach
 * the IPv4 address they carry.
 */
function isIPv4Compatible(addr: ipaddr.IPv6): boolean {
  const p = addr.parts;
  return p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7] > 1);
}

/** An IP address's range as ipaddr.js names it (`unicast`, `loopback`, `private`...), an IPv4-mapped (`::ffff:a.b.c.d`) or IPv4-compatible (`::a.b.c.d`) IPv6 address by the IPv4 address it carries; null when `address` is not one. */
export function addressRange(address: string): string | null {
  if (!ipaddr.isValid(address)) return null;
  let addr = ipaddr.parse(address);
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress() || isIPv4Compatible(v6)) addr = new ipaddr.IPv4(v6.toByteArray().slice(12));
  }
  return addr.range();
}

/** The checks every outbound URL passes: a URL, http or https, no credentials (`protocolReason`: the refusal of another scheme). */
export function checkHttpUrl(value: string, protocolReason = 'must use http or https'): UrlVerdict {
  const url = parseUrl(value);
  if (!url) return { ok: false, reason: 'is not a URL' };
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: protocolReason };
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  return { ok: true, url };
}

export function checkPublicHttpUrl(value: string): UrlVerdict {
  const parsed = checkHttpUrl(value);
  if (!parsed.ok) return parsed;
  const url = parsed.url;
  const host = hostOf(url);
  if (host === '') return { ok: false, reason: 'has no host' };
  const range = addressRange(host);
  if (range !== null) return range === 'unicast' ? { ok: true, url } : { ok: false, reason: `points to a ${range} address` };
  // A name: dotted labels only (ipaddr.isValid above also takes the odd IPv4 forms the URL parser normalised).
  if (!host.includes('.') || LOCAL_NAMES.test(host)) return { ok: false, reason: 'points to a local host name' };
  return { ok: true, url };
}

export const isPublicHttpUrl = (value: string): boolean => checkPublicHttpUrl(value).ok;

export const isDataImage = (value: string): boolean => /^data:image\/[a-z0-9.+-]+;base64,/i.test(value);

const MESSAGE = 'must be a public http(s) URL (no loopback, private, link-local or local-name hosts)';

/** zod for a field holding a URL the vendor will fetch. */
export const PublicUrl = z.string().refine(isPublicHttpUrl, { message: MESSAGE });

/** zod for an image reference: a public URL, or inline as `data:image/...;base64,...`. */
export const PublicUrlOrDataImage = z.string().refine((s) => isDataImage(s) || isPublicHttpUrl(s), {
  message: `${MESSAGE}, or a data:image/...;base64,... URI`,
});

/**
 * zod for a reference image of the images endpoints (spec 2 section 4.2: "each a public https URL or a
 * `data:image/...;base64,...` URI"): the public URL policy above, and https only.
 */
export const PublicHttpsUrlOrDataImage = z.string().refine((s) => isDataImage(s) || (isPublicHttpUrl(s) && parseUrl(s)?.protocol === 'https:'), {
  message: 'must be a public https URL (no loopback, private, link-local or local-name hosts), or a data:image/...;base64,... URI',
});

/**
 * zod for a URI that may name the vendor's own store rather than a web address
 * (generate-content `fileData.fileUri`: a Files API URI, `gs://...`): a value
 * that is not an http(s) URL is the vendor's to resolve, and an http(s) URL
 * takes the policy above, so a loopback, private or link-local host is refused
 * in this field as in every other.
 */
export const PublicUrlOrVendorUri = z.string().refine((s) => {
  const url = parseUrl(s);
  return !(url && (url.protocol === 'http:' || url.protocol === 'https:')) || isPublicHttpUrl(s);
}, { message: `${MESSAGE}, or a URI of the vendor's own file store` });
