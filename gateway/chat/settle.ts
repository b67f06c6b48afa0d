import pRetry, { type Options as RetryOptions } from 'p-retry';
import type { Model } from '../../domain/catalogue';
import { chatCharge, type TokenUsage } from '../../domain/pricing';
import type { ChargeTicket, LedgerOp } from '../../capabilities/accounts/wallet';
import { sameShard } from '../../platform/redis';
import type { HeldLease } from '../middleware/rate-limit';
import { usageDoc } from '../../capabilities/usage/usage';
import type { StoredUsage } from '../../capabilities/usage/store';
import type { ServiceDeps } from '../deps';
import type { Ctx } from '../context';
import { outcomeRow } from '../middleware/usage-capture';
import { armed, failpoint } from '../../platform/failpoints';
import { countUsageEstimated } from '../../platform/metrics/index';
import type { UsageMisreport } from '../../domain/usage-estimate';
import { walletOf } from '../../domain/api-key';
import { deadlineIn } from '../deadlines';
import { LiveList } from '../../platform/live-list';

export type ChatOutcome = 'success' | 'interrupted' | 'error';

export interface OutcomeInfo {
  status: ChatOutcome;
  attempts: number;
  errorCode?: string;
  errorMessage?: string;
  /** How the billed usage was arrived at (domain/usage-estimate), and on which channel (`outputChars` is read only for a misreport's note: it may count on demand). */
  billing?: { estimated: boolean; misreport?: UsageMisreport; outputChars: number; channel: string };
}

const MISREPORT_TEXT: Record<UsageMisreport, string> = { missing: 'no usage', zero: 'zero usage', too_low: 'implausibly low usage' };

/** The row's note when the upstream's usage was replaced by the estimate (and the counter operators watch). */
function misreportNote(model: Model, outcome: OutcomeInfo): string | undefined {
  const b = outcome.billing;
  if (!b?.estimated) return undefined;
  // A turn cut short (no usage, or less than it delivered) is billed on the estimate too: counted, with no note.
  if (!b.misreport) {
    countUsageEstimated({ channel: b.channel, model: model.id, reason: 'interrupted' });
    return undefined;
  }
  countUsageEstimated({ channel: b.channel, model: model.id, reason: b.misreport });
  return `usage estimated from ${b.outputChars} output characters: the upstream reported ${MISREPORT_TEXT[b.misreport]}`;
}

/**
 * The write-ahead of a charge (one Redis script) is retried for about ten
 * seconds: a Redis restart or failover of a few seconds costs the charge
 * nothing. The op id makes a retry of a script that did run (its reply lost)
 * a no-op.
 */
const AHEAD_RETRY: RetryOptions = { retries: 6, minTimeout: 100, factor: 2, maxTimeout: 2_000 };
/** Past that, the ledger takes the charge directly, retried for about fifteen seconds of store outage. */
const DIRECT_RETRY: RetryOptions = { retries: 8, minTimeout: 100, factor: 2, maxTimeout: 3_000 };
/** The projection then follows when Redis is back, for up to a few minutes (the audit heals anything later). */
const PROJECTION_RETRY: RetryOptions = { retries: 40, minTimeout: 500, factor: 2, maxTimeout: 5_000 };

/**
 * Settle one chat turn on its actual usage, without a balance gate (the
 * balance may dip below 0 under concurrency; the next request is refused).
 * The charge and the call's usage row are written ahead together (the wallet
 * script moves the projection and appends both to the ledger journal, which
 * any gateway or worker drains to Mongo), so once this resolves the charge
 * outlives this process. The op id makes a repeated settlement a no-op. A
 * charge is never recorded at 0 because a write failed: it is retried, then
 * written straight to the ledger, and only a double outage beyond those
 * budgets leaves it to the error log (with everything needed to replay it).
 */
export async function settleChat(deps: ServiceDeps, ctx: Ctx, model: Model, usage: TokenUsage | null, outcome: OutcomeInfo): Promise<number> {
  const auth = ctx.state.auth!;
  ctx.state.usageRecorded = true;
  // The one computation of this call's price: the ledger takes costNano, the answer reports the same charge (domain/cost-report.ts).
  const line = ctx.state.batchLine?.keyId === auth.key.id ? ctx.state.batchLine : undefined;
  const charge = usage ? chatCharge(model, deps.catalogue().pricingRules, usage, new Date(), { batch: line !== undefined }) : undefined;
  ctx.state.charge = charge;
  const cost = charge?.costNano ?? 0;
  const note = misreportNote(model, outcome);
  const row = usageDoc(
    outcomeRow(ctx, {
      status: outcome.status,
      model: model.id,
      input_tokens: usage?.inputTokens ?? 0,
      output_tokens: usage?.outputTokens ?? 0,
      cached_tokens: usage?.cachedTokens ?? 0,
      server_tool_calls: usage?.serverToolCalls ?? 0,
      unit_count: usage ? usage.inputTokens + usage.outputTokens : 0,
      unit_type: 'token',
      cost_nano: cost,
      attempts_count: outcome.attempts,
      error_code: outcome.errorCode ?? null,
      error_message: outcome.errorMessage ?? note ?? null,
      usage_estimated: outcome.billing?.estimated ?? false,
    }),
  );
  if (cost === 0) {
    const again = () => deps.wallet.journal.append({ u: row }, walletOf(auth.key));
    await again().catch(() => pRetry(again, AHEAD_RETRY)).catch(() => deps.usage.record(row));
    return 0;
  }
  const op: LedgerOp = {
    opId: `${ctx.state.requestId}:charge`,
    accountId: walletOf(auth.key),
    keyId: auth.key.id,
    kind: 'charge',
    amountNano: -cost,
    keySpendNano: cost,
    ref: ctx.state.requestId,
  };
  // The call's concurrency slot is freed by the same script when it lives in the wallet's shard.
  const held = ctx.state.lease;
  const lease = held && sameShard(held.accountId, op.accountId) ? held : undefined;
  if (line) {
    // A batch line may be sent again by a worker that replaced a killed one: its op id is the line's, and the
    // marked path dedupes it from any process (the ledger, then the op's marker), so it is charged once.
    const marked = () => deps.wallet.applyMarkedAhead(op, { usage: row });
    await marked().catch(() => pRetry(marked, AHEAD_RETRY)).then(() => undefined, (err: unknown) => deps.log.error('batch line charge not written', { trace: op.ref, op, row, err }));
    return cost;
  }
  const ticket = deps.wallet.ticket();
  try {
    await writeCharge(deps, op, row, ticket, lease);
  } finally {
    ticket.close();
  }
  return cost;
}

/**
 * Every attempt carries the charge's ticket (capabilities/accounts/wallet.ts): a retry of
 * a script that did run, its reply lost, is a no-op, without any per-call
 * marker in Redis.
 */
async function writeCharge(deps: ServiceDeps, op: LedgerOp, row: StoredUsage, ticket: ChargeTicket, lease?: HeldLease): Promise<void> {
  try {
    // The first try outside p-retry: its machinery costs more than the script on the normal path.
    const ahead = () => deps.wallet.applyAhead(op, row, ticket, lease);
    await ahead().catch(() => pRetry(ahead, AHEAD_RETRY));
    lease?.freed();
    return;
  } catch (err) {
    deps.log.warn('chat charge journal unavailable; writing the ledger directly', { trace: op.ref, err });
  }
  try {
    await pRetry(() => deps.wallet.recordDirect(op, row, ticket), DIRECT_RETRY);
  } catch (err) {
    deps.log.error('chat charge not written', { trace: op.ref, op, row, err });
    return;
  }
  await pRetry(() => deps.wallet.apply(op, undefined, ticket), PROJECTION_RETRY).catch((err: unknown) => {
    deps.log.error('chat charge in the ledger but not in the balance projection; the wallet audit repairs it', { trace: op.ref, op, err });
  });
}

/**
 * How long an answer waits for its charge to be written ahead (one Redis
 * script, normally well under a millisecond). Only during a Redis outage does
 * the wait run out; the answer then goes out and the charge keeps being
 * retried in the background.
 */
const DURABLE_WAIT_MS = 1_000;
/** Past this many settlements still retrying, callers wait for theirs (back-pressure, not an unbounded backlog). */
const MAX_BACKGROUND = 256;
/** Not a Set: platform/live-list.ts says why. */
const background = new LiveList<Promise<unknown>>();

/**
 * Settle before the answer's last byte goes out: the caller awaits this, then
 * finishes the response, so a gateway that dies right after answering has
 * already made the charge durable.
 */
export function settleDurably(deps: ServiceDeps, ctx: Ctx, model: Model, usage: TokenUsage | null, outcome: OutcomeInfo): Promise<void> {
  ctx.state.usageRecorded = true; // the row is on its way; a late error must not write a second one
  const p = settleChat(deps, ctx, model, usage, outcome).then(
    () => undefined,
    (err: unknown) => deps.log.error('chat settlement failed', { trace: ctx.state.requestId, err }),
  );
  const entry = background.add(p);
  void p.finally(() => background.delete(entry));
  ctx.state.settlement = p; // its end, for what must follow the charge (an escrow's in-flight record, gateway/chat/agent-serve.ts)
  if (background.size > MAX_BACKGROUND) return p;
  // The wait's bound is an entry in the shared deadline sweep, not a timer per call.
  return new Promise<void>((resolve) => {
    const bound = deadlineIn(DURABLE_WAIT_MS, resolve);
    void p.then(() => {
      bound.clear();
      resolve();
    });
  });
}

/** Wait for every settlement still running (shutdown, tests). */
export async function drainSettlements(): Promise<void> {
  while (background.size > 0) await Promise.all(background.values());
}

/** Test hook: SIGKILL this process once the answer has been handed to the socket (FAILPOINTS=chat.answered). */
export function failAfterAnswer(ctx: Ctx): void {
  if (armed('chat.answered')) ctx.res.once('finish', () => failpoint('chat.answered'));
}
