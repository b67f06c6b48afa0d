import { z } from 'zod';
/**
 * Money is an integer count of nano-credits (1 credit = 1e9 nano). Credits are
 * the wallet's unit and are shown as USD. Integer arithmetic only; decimal
 * strings exist only at the API edge (formatCredits / parseCredits).
 */
export type Nano = number;

export const NANO_PER_CREDIT = 1_000_000_000;
const NANO_BIG = 1_000_000_000n;

/** Parse a decimal credit amount ("40.44", 134.8, "0.000000001") into nano exactly. */
/**
 * Catalogue prices are a small set of strings parsed on every chat charge: their values are
 * memoised (bounded; the parse is pure, so a cache is safe in workflows too).
 */
const PARSED_CREDITS = new Map<string | number, Nano>();
const PARSED_RATIOS = new Map<string, Ratio>();
const MEMO_LIMIT = 4096;

function memo<K, T>(cache: Map<K, T>, key: K, compute: () => T): T {
  let v = cache.get(key);
  if (v === undefined) {
    v = compute();
    if (cache.size >= MEMO_LIMIT) cache.clear();
    cache.set(key, v);
  }
  return v;
}

/** Prices in the catalogue may be JSON numbers as well as strings: both are memoised (a number and its text are separate keys). */
export function parseCredits(value: string | number): Nano {
  return memo(PARSED_CREDITS, value, () => parseCreditsNow(value));
}

function parseCreditsNow(value: string | number): Nano {
  const text = typeof value === 'number' ? numberToPlainString(value) : value.trim();
  const m = /^(-)?(\d+)(?:\.(\d{1,9}))?$/.exec(text);
  if (!m) throw new RangeError(`not a credit amount with at most 9 decimals: ${String(value)}`);
  const whole = BigInt(m[2]) * NANO_BIG;
  const frac = BigInt((m[3] ?? '').padEnd(9, '0'));
  const nano = whole + frac;
  return toSafe(m[1] ? -nano : nano);
}

function numberToPlainString(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`not a finite number: ${n}`);
  // toFixed(9) then trim: exact for any amount with <= 9 decimals that a client can send.
  return n.toFixed(9);
}

/** Decimal string with at least 2 and at most 9 decimals, trailing zeros trimmed. */
export function formatCredits(nano: Nano): string {
  const neg = nano < 0;
  const abs = BigInt(Math.abs(nano));
  const whole = abs / NANO_BIG;
  let frac = (abs % NANO_BIG).toString().padStart(9, '0').replace(/0+$/, '');
  if (frac.length < 2) frac = frac.padEnd(2, '0');
  return `${neg ? '-' : ''}${whole}.${frac}`;
}

/** JSON number for billing-compatibility objects. */
export function creditsNumber(nano: Nano): number {
  return Number(formatCredits(nano));
}

/** A multiplier kept exact as a fraction, e.g. 1.25 = 5/4, 0.3 = 3/10. */
export interface Ratio {
  num: bigint;
  den: bigint;
}

export const ONE: Ratio = { num: 1n, den: 1n };

export function ratio(value: number | string): Ratio {
  const text = typeof value === 'number' ? String(value) : value;
  return memo(PARSED_RATIOS, text, () => Object.freeze(ratioNow(text)));
}

function ratioNow(text: string): Ratio {
  const m = /^(\d+)(?:\.(\d{1,9}))?$/.exec(text);
  if (!m) throw new RangeError(`not a non-negative decimal multiplier: ${text}`);
  const decimals = (m[2] ?? '').length;
  return { num: BigInt(m[1] + (m[2] ?? '')), den: 10n ** BigInt(decimals) };
}

export function mulRatio(a: Ratio, b: Ratio): Ratio {
  return { num: a.num * b.num, den: a.den * b.den };
}

/**
 * units x price x multiplier / per, rounded half up to a whole nano. `price` is
 * nano per `per` units (e.g. nano per 1M tokens). One rounding per line item.
 */
export function lineCost(units: number, priceNano: Nano, per: number, multiplier: Ratio = ONE): Nano {
  if (units <= 0 || priceNano <= 0) return 0;
  const numerator = BigInt(Math.round(units)) * BigInt(priceNano) * multiplier.num * 2n;
  const denominator = BigInt(per) * multiplier.den;
  return toSafe((numerator / denominator + 1n) / 2n);
}

const OUTSIDE_SAFE_RANGE = 'amount outside the safe integer range';

function toSafe(n: bigint): Nano {
  if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new RangeError(OUTSIDE_SAFE_RANGE);
  }
  return Number(n);
}

/** An amount of credits at an input boundary (a JSON number or a decimal string), parsed to nano; negative or over-precise is a field error. */
export const CreditsInput = z.union([z.number(), z.string()]).transform((v, c) => {
  try {
    const n = parseCredits(v);
    if (n < 0) throw new RangeError('negative');
    return n;
  } catch (err) {
    // A well-formed amount past the safe range is too large, not malformed: say so.
    const tooLarge = err instanceof RangeError && err.message === OUTSIDE_SAFE_RANGE && !String(v).trim().startsWith('-');
    c.addIssue({ code: 'custom', message: tooLarge ? `must be at most ${formatCredits(Number.MAX_SAFE_INTEGER)}` : 'must be a non-negative amount with at most 9 decimals' });
    return z.NEVER;
  }
});
