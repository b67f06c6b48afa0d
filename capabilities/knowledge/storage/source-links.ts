import { createHmac, timingSafeEqual } from 'node:crypto';
import type { PageSource, SourceInfo } from '../../../domain/knowledge/page';

/**
 * Pre-signed download links to the files behind knowledge-base pages (spec 3
 * section 2.4: `url` expires after one hour, `url_ttl_secs` 3600). A link is
 * `{base}/kb/files/{r2_key}?expires={unix seconds}&sig={hmac}` where the HMAC
 * (SHA-256, keyed by a deployment secret, see `sourceLinkSecret`) covers the
 * path and the expiry, so any gateway instance can check it without a lookup
 * and a changed key, path or expiry is refused.
 */
export const SOURCE_URL_TTL_SECS = 3600;
export const SOURCE_FILES_PATH = '/kb/files/';

/** Storage keys are path-safe: letters, digits and `._-` in `/`-separated segments. */
const KEY_SHAPE = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

export type LinkCheck = 'ok' | 'expired' | 'invalid';

export class SourceLinks {
  constructor(
    private readonly secret: Buffer,
    /** Public origin of the gateway (platform/config.ts publicBaseUrl: PUBLIC_BASE_URL, never a request's headers). */
    private readonly publicBaseUrl?: string,
  ) {}

  /** The signed link to a stored file, valid `SOURCE_URL_TTL_SECS` from `nowMs`. */
  sign(r2Key: string, baseUrl: string, nowMs = Date.now()): { url: string; url_ttl_secs: number } {
    if (!KEY_SHAPE.test(r2Key)) throw new Error(`not a storage key: ${r2Key.slice(0, 80)}`);
    const path = `${SOURCE_FILES_PATH}${r2Key}`;
    const expires = Math.floor(nowMs / 1000) + SOURCE_URL_TTL_SECS;
    const base = (this.publicBaseUrl ?? baseUrl).replace(/\/+$/, '');
    return { url: `${base}${path}?expires=${expires}&sig=${this.mac(path, expires)}`, url_ttl_secs: SOURCE_URL_TTL_SECS };
  }

  /** Spec 3 section 2.4 for a page's source: what `GET .../pages/{id}/source` and MCP `get_source` answer. */
  sourceInfo(source: PageSource, baseUrl: string, nowMs = Date.now()): SourceInfo {
    const link = this.sign(source.r2_key, baseUrl, nowMs);
    return { r2_key: source.r2_key, filename: source.filename, locator: source.locator, url: link.url, url_ttl_secs: link.url_ttl_secs };
  }

  /** Check a link's path (as requested, `/kb/files/...`), `expires` and `sig` query values. */
  check(path: string, expires: string | undefined, sig: string | undefined, nowMs = Date.now()): LinkCheck {
    if (!path.startsWith(SOURCE_FILES_PATH) || !KEY_SHAPE.test(path.slice(SOURCE_FILES_PATH.length))) return 'invalid';
    if (!expires || !/^\d{1,12}$/.test(expires) || !sig || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return 'invalid';
    const want = Buffer.from(this.mac(path, Number(expires)));
    const got = Buffer.from(sig);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return 'invalid';
    return Number(expires) * 1000 <= nowMs ? 'expired' : 'ok';
  }

  private mac(path: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`GET\n${path}\n${expires}`).digest('base64url');
  }
}

/** The storage key a stored link path names. */
export const keyOfLinkPath = (path: string): string => path.slice(SOURCE_FILES_PATH.length);

/**
 * The signing secret: `KB_LINK_SECRET` when set, else one derived from
 * `KEY_ENCRYPTION_KEY` (every gateway of a deployment shares it, so a link
 * signed by one is accepted by all) under its own label, so the link key
 * never equals the key-encryption key.
 */
export function sourceLinkSecret(config: { KB_LINK_SECRET?: string; KEY_ENCRYPTION_KEY: string }): Buffer {
  if (config.KB_LINK_SECRET) return Buffer.from(config.KB_LINK_SECRET, 'utf8');
  return createHmac('sha256', Buffer.from(config.KEY_ENCRYPTION_KEY, 'hex')).update('kb-source-links/v1').digest();
}
