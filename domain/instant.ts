import { z } from 'zod';

/**
 * The one date parser of every request input (task lists' and usage logs'
 * `from`/`to`, key expiry): Unix seconds, RFC 3339, or `YYYY-MM-DD` (midnight
 * UTC). Anything else, and any instant outside years 1970 to 9999 (which a
 * JavaScript Date or a BSON date could not hold, or no record can carry), is
 * refused: the caller answers 400, never hands an invalid Date to the store.
 */
export const INSTANT_FORMATS = 'Unix seconds, RFC 3339 or YYYY-MM-DD';

/** 9999-12-31T23:59:59.999Z: the last instant a four-digit year can write. */
export const LATEST_INSTANT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** A real calendar day (no 2026-02-30, no month 13). */
function isCalendarDay(y: number, m: number, d: number): boolean {
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

function inRange(ms: number): Date | null {
  return Number.isFinite(ms) && ms >= 0 && ms <= LATEST_INSTANT_MS ? new Date(ms) : null;
}

/** The instant `raw` names, or null when it is not one of the accepted forms or not representable. */
export function parseInstant(raw: string): Date | null {
  // In a query string an unencoded `+` of an RFC 3339 offset arrives as a space.
  const value = raw.trim().replace(/ (\d{2}:\d{2})$/, '+$1');
  if (/^\d{1,15}$/.test(value)) return inRange(Number(value) * 1000);
  const day = DATE_ONLY.exec(value);
  if (day) {
    const [y, m, d] = [Number(day[1]), Number(day[2]), Number(day[3])];
    return isCalendarDay(y, m, d) ? inRange(Date.UTC(y, m - 1, d)) : null;
  }
  const t = RFC3339.exec(value);
  if (!t) return null;
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(t[i]));
  if (!isCalendarDay(y, mo, d) || h > 23 || mi > 59 || s > 60) return null;
  return inRange(Date.parse(value.replace(' ', 'T').toUpperCase()));
}

/** zod for an instant given as a string (query parameters). */
export const InstantString = z.string().transform((v, ctx) => {
  const d = parseInstant(v);
  if (d) return d;
  ctx.addIssue({ code: 'custom', message: `must be ${INSTANT_FORMATS} (years 1970 to 9999)` });
  return z.NEVER;
});

/** zod for an instant in a JSON body: Unix seconds as a number, or any string form. */
export const Instant = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const d = typeof v === 'number' ? (Number.isInteger(v) ? inRange(v * 1000) : null) : parseInstant(v);
  if (d) return d;
  ctx.addIssue({ code: 'custom', message: `must be ${INSTANT_FORMATS} (years 1970 to 9999)` });
  return z.NEVER;
});
