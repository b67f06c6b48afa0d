import { z } from 'zod';
import { errors } from '../../domain/errors';

/** The longest duration any video submission may ask for: keeps reservations sane (the vendors' own limits are far lower). */
export const MAX_SECONDS = 3600;

/** A `duration` in whole seconds. */
export const Seconds = z.number().int('must be a whole number of seconds').min(1).max(MAX_SECONDS);

const PRIVATE_HOST = [
  /^localhost$/i, /\.localhost$/i, /\.local$/i, /\.internal$/i, /^0\.0\.0\.0$/, /^127\./, /^10\./, /^192\.168\./,
  /^172\.(1[6-9]|2\d|3[01])\./, /^169\.254\./, /^\[?::1\]?$/, /^\[?f[cd][0-9a-f]{2}:/i, /^\[?fe80:/i,
];

/** A public http(s) URL: the upstream fetches it, so loopback and private addresses cannot work. */
export function isPublicHttpUrl(value: string): boolean {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
  return !PRIVATE_HOST.some((re) => re.test(u.hostname));
}

export const PublicUrl = z.string().refine(isPublicHttpUrl, { message: 'must be a public http(s) URL' });

export const isDataImage = (value: string) => /^data:image\/[a-z0-9.+-]+;base64,/i.test(value);

/** Validate with zod; the first issue becomes a 400 naming the field. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const path = issue.path.map(String).join('.');
  const missing = issue.code === 'invalid_type' && /received undefined/.test(issue.message);
  throw errors.invalidRequest(missing ? `${path} is required` : `${path ? `${path}: ` : ''}${issue.message}`, path || undefined);
}
