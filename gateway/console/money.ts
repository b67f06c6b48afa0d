import { NANO_PER_CREDIT, type Nano } from '../../domain/money';
import { html, type Html } from './html';

/**
 * How the console writes money: one currency (USD, the wallet's currency in
 * spec 1; a credit is one dollar), one symbol, thousands separators, and
 * exact integer arithmetic on nano amounts (never a float).
 *
 * - `usd`: balances, top-ups: always 2 decimals ("$1,234.50").
 * - `limitUsd`: spend caps: 2 decimals, or exactly what was set ("$12.345").
 * - `cost`: what was spent (a call, a task, a key, a model, a period): up to 4 decimals, at least 2
 *   ("$0.0273", "$1.20"); a non-zero amount under a cent reads "< $0.01".
 * Both carry the exact amount in a title (hover) where rounding hid digits.
 */
export const CURRENCY = 'USD';
export const UNIT_WORD = 'USD';

const NANO = BigInt(NANO_PER_CREDIT);
const group = (whole: bigint) => whole.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** Exact decimal text with `decimals` places, rounded half away from zero, grouped. */
export function usdText(nano: Nano, decimals = 2, minDecimals = decimals): string {
  const neg = nano < 0;
  const abs = BigInt(Math.abs(nano));
  const step = 10n ** BigInt(9 - decimals);
  const rounded = ((abs + step / 2n) / step) * step;
  const whole = rounded / NANO;
  let frac = (rounded % NANO).toString().padStart(9, '0').slice(0, decimals);
  while (frac.length > minDecimals && frac.endsWith('0')) frac = frac.slice(0, -1);
  return `${neg ? '-' : ''}$${group(whole)}${frac ? `.${frac}` : ''}`;
}

/** The exact amount, every significant decimal (for titles and inputs). */
export function exactUsd(nano: Nano): string {
  const neg = nano < 0;
  const abs = BigInt(Math.abs(nano));
  let frac = (abs % NANO).toString().padStart(9, '0').replace(/0+$/, '');
  if (frac.length < 2) frac = frac.padEnd(2, '0');
  return `${neg ? '-' : ''}$${group(abs / NANO)}.${frac}`;
}

/** A plain decimal for a form input ("134.80", "12.345"), no symbol, no separators, never rounded:
 * a form saved as shown must keep the amount it was given. */
export function inputAmount(nano: Nano): string {
  return exactUsd(nano).replace(/[$,]/g, '');
}

/** An amount as typed into a form ("$1,500.25") as a plain decimal ("1500.25"): no symbol, no separators. */
export const plainAmount = (typed: string): string => typed.trim().replace(/^\$/, '').replace(/,/g, '');

function withTitle(text: string, nano: Nano): Html {
  const exact = exactUsd(nano);
  return exact === text ? html`<span class="money">${text}</span>` : html`<span class="money" title="${exact} exactly">${text}</span>`;
}

/** Balances, totals: 2 decimals. */
export const usd = (nano: Nano): Html => withTitle(usdText(nano, 2), nano);

/** A limit someone set (a key's spend cap): 2 decimals, or every decimal it was given ("$12.345", "$0.004"):
 * rounding a limit would show one that is not enforced. */
export const limitUsd = (nano: Nano): Html => withTitle(usdText(nano, 2) === exactUsd(nano) ? usdText(nano, 2) : exactUsd(nano), nano);

/** Per-call and per-task costs: up to 4 decimals; under a cent reads "< $0.01". */
export function cost(nano: Nano): Html {
  if (nano !== 0 && Math.abs(nano) < NANO_PER_CREDIT / 100) return withTitle(`${nano < 0 ? '-' : ''}< $0.01`, nano);
  return withTitle(usdText(nano, 4, 2), nano);
}

/** A price from the catalogue (a decimal string or number of credits) as money text. */
export function priceText(value: string | number): string {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(n)) return String(value);
  const nano = Math.round(n * NANO_PER_CREDIT);
  if (nano !== 0 && Math.abs(nano) < NANO_PER_CREDIT / 100) return exactUsd(nano);
  return usdText(nano, 4, 2);
}
