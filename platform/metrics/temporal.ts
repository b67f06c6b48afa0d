import { Gauge } from 'prom-client';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory, Worker } from '@temporalio/worker';
import type { Metrics } from './registry';

/** The fixed slot count of a slot supplier, or null for a resource-based or custom tuner. */
function fixedSlots(supplier: unknown): number | null {
  const s = supplier as { type?: string; numSlots?: number } | undefined;
  return s?.type === 'fixed-size' && typeof s.numSlots === 'number' ? s.numSlots : null;
}

/**
 * The worker's slots, read at scrape time from `worker.getStatus()`: how many
 * activities and workflow activations run now against how many may, and the
 * sticky cache. A worker at its activity slot limit leaves tasks waiting in
 * Temporal (schedule-to-start latency grows).
 */
export function watchWorker(m: Metrics, worker: Worker): void {
  const registers = [m.registry];
  const tuner = worker.options.tuner;
  const slots = { activity: fixedSlots(tuner.activityTaskSlotSupplier), workflow: fixedSlots(tuner.workflowTaskSlotSupplier), local_activity: fixedSlots(tuner.localActivityTaskSlotSupplier) };
  new Gauge({
    name: 'gateway_temporal_worker_slots_used',
    help: 'Task slots in use on this worker, by kind (activity, local_activity, workflow)',
    labelNames: ['kind'] as const,
    registers,
    collect() {
      const s = worker.getStatus();
      this.set({ kind: 'activity' }, s.numInFlightNonLocalActivities);
      this.set({ kind: 'local_activity' }, s.numInFlightLocalActivities);
      this.set({ kind: 'workflow' }, s.numInFlightWorkflowActivations);
    },
  });
  new Gauge({
    name: 'gateway_temporal_worker_slots_max',
    help: 'Task slots this worker has, by kind (fixed-size tuners only)',
    labelNames: ['kind'] as const,
    registers,
    collect() {
      for (const [kind, n] of Object.entries(slots)) if (n !== null) this.set({ kind }, n);
    },
  });
  new Gauge({
    name: 'gateway_temporal_worker_cached_workflows',
    help: 'Workflows held in this worker\'s sticky cache',
    registers,
    collect() {
      this.set(worker.getStatus().numCachedWorkflows);
    },
  });
}

/** Count and time every activity execution; a failure is labelled with whether Temporal will retry it. */
export function activityMetrics(m: Metrics): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const activity = ctx.info.activityType;
        const started = performance.now();
        try {
          const result = await next(input);
          m.activityDuration.observe({ activity, outcome: 'ok' }, (performance.now() - started) / 1000);
          return result;
        } catch (err) {
          m.activityDuration.observe({ activity, outcome: 'failed' }, (performance.now() - started) / 1000);
          const final = err instanceof ApplicationFailure && err.nonRetryable;
          m.activityFailures.inc({ activity, retryable: final ? 'false' : 'true' });
          throw err;
        }
      },
    },
  });
}
