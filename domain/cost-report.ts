import type { ChatCharge } from './pricing';
import { formatCredits, type Ratio } from './money';

/**
 * What an answer says it cost (issue 26): the charge the ledger took, in credits, and its lines.
 * Built from the same ChatCharge the settlement writes to the ledger, so the two cannot differ.
 */
export interface CostReport {
  /** Credits, decimal string: exactly the ledger entry of the call. */
  cost: string;
  cost_details: {
    uncached_input: string;
    cached_input: string;
    cache_write: string;
    output: string;
    server_tool_calls: string;
    /** The multipliers applied to token prices (1 when not in force), decimal strings. */
    multipliers: { promotion: string; long_context: string; batch: string; cache_write: string };
  };
}

/** A multiplier as an exact decimal string (its denominator is a power of ten), a fraction otherwise. */
export function ratioText(r: Ratio): string {
  let den = r.den;
  let decimals = 0;
  while (den > 1n && den % 10n === 0n) {
    den /= 10n;
    decimals++;
  }
  if (den !== 1n) return `${r.num}/${r.den}`;
  const digits = r.num.toString().padStart(decimals + 1, '0');
  if (decimals === 0) return digits;
  const text = `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`.replace(/0+$/, '').replace(/\.$/, '');
  return text;
}

export function costReport(charge: ChatCharge | undefined | null): CostReport {
  const l = charge?.lines ?? { input: 0, cached: 0, cacheWrite: 0, output: 0, serverTools: 0 };
  const m = charge?.multipliers;
  const one = '1';
  return {
    cost: formatCredits(charge?.costNano ?? 0),
    cost_details: {
      uncached_input: formatCredits(l.input),
      cached_input: formatCredits(l.cached),
      cache_write: formatCredits(l.cacheWrite),
      output: formatCredits(l.output),
      server_tool_calls: formatCredits(l.serverTools),
      multipliers: {
        promotion: m ? ratioText(m.promotion) : one,
        long_context: m ? ratioText(m.longContext) : one,
        batch: m ? ratioText(m.batch) : one,
        cache_write: m ? ratioText(m.cacheWrite) : one,
      },
    },
  };
}
