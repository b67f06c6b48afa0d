import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every Prometheus series of the project (docs/observability.md lists them).
 * Labels are bounded: routes are templates, models and channels come from
 * the catalogue, statuses and outcomes from small fixed sets. Nothing here
 * carries an account, a key, a task id or a raw path.
 */
export function defineMetrics(registry: Registry, service: 'gateway' | 'worker') {
  registry.setDefaultLabels({ service });
  // Process CPU, memory, GC, handles and event-loop lag (nodejs_eventloop_lag_* from monitorEventLoopDelay).
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
  const registers = [registry];
  return {
    registry,
    /** `_count` is the request count; by route template, protocol, model and status code. */
    httpDuration: new Histogram({
      name: 'gateway_http_request_duration_seconds',
      help: 'HTTP requests: time from arrival to the last byte sent (streams: until the stream closes), by route template, protocol, model and status',
      labelNames: ['route', 'protocol', 'model', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180],
      registers,
    }),
    streamsOpen: new Gauge({
      name: 'gateway_http_streams_open',
      help: 'Responses currently streaming to a client (chat SSE, JSON-array streams, sync image keep-alive)',
      labelNames: ['protocol'] as const,
      registers,
    }),
    upstreamAttempts: new Counter({
      name: 'gateway_upstream_attempts_total',
      help: 'Upstream attempts on the channel ladder, by channel, outcome (ok, http_4xx, http_429, http_5xx, timeout, connect, aborted, other) and whether it was a failover to a later channel',
      labelNames: ['channel', 'outcome', 'failover'] as const,
      registers,
    }),
    upstreamAttemptDuration: new Histogram({
      name: 'gateway_upstream_attempt_duration_seconds',
      help: 'One upstream attempt, until the channel answered (streams: its response headers) or failed, by channel and outcome',
      labelNames: ['channel', 'outcome'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180],
      registers,
    }),
    upstreamTtfb: new Histogram({
      name: 'gateway_upstream_ttfb_seconds',
      help: 'Time from sending an upstream request to the response headers (time to first byte), by channel',
      labelNames: ['channel'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    rateLimited: new Counter({
      name: 'gateway_rate_limit_rejections_total',
      help: 'Requests refused with 429 by the per-account limiter, by which limit (rpm, concurrency)',
      labelNames: ['reason'] as const,
      registers,
    }),
    walletOps: new Counter({
      name: 'gateway_wallet_ops_total',
      help: 'Wallet operations by kind (charge, reserve, settle, topup, ...) and result (applied, duplicate, refused)',
      labelNames: ['kind', 'result'] as const,
      registers,
    }),
    walletAmount: new Counter({
      name: 'gateway_wallet_op_amount_credits_total',
      help: 'Absolute amount moved by applied wallet operations, in credits (shown as USD), by kind and direction (in, out)',
      labelNames: ['kind', 'direction'] as const,
      registers,
    }),
    walletAudits: new Counter({
      name: 'gateway_wallet_audits_total',
      help: 'Wallet audits (auditWalletWorkflow): ledger against projection, by result (clean, drift) and whether the projection was repaired',
      labelNames: ['result', 'repaired'] as const,
      registers,
    }),
    walletAuditDrift: new Counter({
      name: 'gateway_wallet_audit_drift_credits_total',
      help: 'Sum of the absolute ledger/projection drift the wallet audits found, in credits',
      registers,
    }),
    tasksFinished: new Counter({
      name: 'gateway_media_tasks_finished_total',
      help: 'Media tasks that reached a final state, by family and state (succeeded, failed, expired, cancelled)',
      labelNames: ['family', 'state'] as const,
      registers,
    }),
    taskDuration: new Histogram({
      name: 'gateway_media_task_duration_seconds',
      help: 'Media tasks from submission to their final state, by family and state',
      labelNames: ['family', 'state'] as const,
      buckets: [1, 5, 15, 30, 60, 120, 280, 600, 1200, 1800, 3600, 7200],
      registers,
    }),
    idempotency: new Counter({
      name: 'gateway_idempotency_total',
      help: 'Idempotency-Key outcomes other than a first call: replay (stored answer sent again), conflict (same key, other body: 409 idempotency_key_reuse), in_flight (409 idempotency_in_flight)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    activityFailures: new Counter({
      name: 'gateway_temporal_activity_failures_total',
      help: 'Activity executions that threw, by activity type and whether Temporal will retry them',
      labelNames: ['activity', 'retryable'] as const,
      registers,
    }),
    activityDuration: new Histogram({
      name: 'gateway_temporal_activity_duration_seconds',
      help: 'Activity executions on this worker, by activity type and outcome (ok, failed)',
      labelNames: ['activity', 'outcome'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof defineMetrics>;
