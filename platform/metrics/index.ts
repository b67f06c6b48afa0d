import { Registry } from 'prom-client';
import { watchAttempts } from '../../domain/channel-ladder';
import { defineMetrics, type Metrics } from './registry';
import { watchUpstreamAttempt } from './upstream';
import { counters, exportProcessCounters } from './counters';

export type { Metrics };

let current: Metrics | undefined;

/*
 * Every count of the project goes through one function here, named for the
 * event: a call site counts in one line, whether metrics are on or not. Most
 * series exist only while metrics are on (the call is then a no-op); the
 * process-local counters of ./counters.ts are kept either way.
 */

/**
 * The process's metrics, or undefined while they are off (METRICS_PORT
 * unset). Hooks elsewhere are one call each, `currentMetrics()?.x.inc(...)`:
 * with metrics off that is a call returning undefined and nothing else. (A
 * function, not an exported `let`: the tracing preload's ESM hook copies a
 * module's bindings, so a later reassignment would not be seen.)
 */
export function currentMetrics(): Metrics | undefined {
  return current;
}

/** Turn metrics on for this process (once; later calls return the same set). */
export function enableMetrics(service: 'gateway' | 'worker'): Metrics {
  if (current) return current;
  const m = defineMetrics(new Registry(), service);
  current = m;
  exportProcessCounters(m.registry);
  watchAttempts((channel, n, run) => watchUpstreamAttempt(m, channel, n, run));
  return m;
}

const CREDIT = 1e9;

/** An upstream request's time to first byte, for a ladder attempt's request (platform/upstream.ts counts it). */
export function countUpstreamTtfb(channel: string, seconds: number): void {
  current?.upstreamTtfb.observe({ channel }, seconds);
}

/** One wallet op as the projection script answered it (capabilities/accounts/wallet.ts). */
export function countWalletOp(kind: string, result: 'applied' | 'duplicate' | 'refused', amountNano: number): void {
  const m = current;
  if (!m) return;
  m.walletOps.inc({ kind, result });
  if (result === 'applied' && amountNano !== 0) m.walletAmount.inc({ kind, direction: amountNano > 0 ? 'in' : 'out' }, Math.abs(amountNano) / CREDIT);
}

/** A media task reached its final state for the first time (activities/media.ts settle). */
export function countTaskFinished(family: string, state: string, createdAt: Date, completedAt: Date): void {
  const m = current;
  if (!m) return;
  m.tasksFinished.inc({ family, state });
  m.taskDuration.observe({ family, state }, Math.max(0, completedAt.getTime() - createdAt.getTime()) / 1000);
}

/** One wallet audit's verdict (activities/wallet.ts). */
export function countWalletAudit(driftNano: number, repaired: boolean): void {
  const m = current;
  if (!m) return;
  m.walletAudits.inc({ result: driftNano === 0 ? 'clean' : 'drift', repaired: String(repaired) });
  if (driftNano !== 0) m.walletAuditDrift.inc(Math.abs(driftNano) / CREDIT);
}

/** An Idempotency-Key outcome other than a first call (gateway/middleware/idempotency.ts). */
export function countIdempotency(outcome: 'replay' | 'conflict' | 'in_flight'): void {
  current?.idempotency.inc({ outcome });
}

/** A request refused with 429 by the per-account limiter (gateway/middleware/rate-limit.ts). */
export function countRateLimited(reason: 'rpm' | 'concurrency'): void {
  current?.rateLimited.inc({ reason });
}

const ADMITTED = { outcome: 'admitted' };
const REFUSED = { outcome: 'refused' };

/** A chat call run on the key's last known state, by what its fresh state said (gateway/middleware/auth.ts). */
export function countOptimisticAuth(outcome: 'admitted' | 'refused'): void {
  counters.chatOptimisticAuth.inc(outcome === 'admitted' ? ADMITTED : REFUSED);
}

/** A chat turn billed on the character estimate (gateway/chat/settle.ts). */
export function countUsageEstimated(labels: { channel: string; model: string; reason: string }): void {
  counters.chatUsageEstimated.inc(labels);
}
