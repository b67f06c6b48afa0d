/**
 * A circuit breaker per channel (pure; the clock is passed in). Closed: every
 * request may use the channel; `failureThreshold` consecutive failures (5xx,
 * timeouts, connection errors), each within a cool-down of the one before, open it. Open: the ladder puts the channel
 * behind every healthy one for `coolDownMs`. Then half-open: one request at a
 * time probes it; a success closes it, a failure opens it for another
 * cool-down. An answer below 500 (the upstream is alive) counts as a success.
 */
export type BreakerState = 'closed' | 'open' | 'half_open';

export interface BreakerPolicy {
  failureThreshold: number;
  coolDownMs: number;
}

/** What one attempt on a channel said about its health. */
export type AttemptVerdict = 'ok' | 'failed' | 'neutral';

export interface BreakerSnapshot {
  state: BreakerState;
  consecutive_failures: number;
  /** Unix ms the breaker last opened, or null. */
  opened_at: number | null;
  /** Unix ms from which a probe is let through (open), or null. */
  probe_after: number | null;
  last_failure: string | null;
  /** How many times it opened since this process started. */
  opens: number;
}

export class CircuitBreaker {
  private state: BreakerState = 'closed';
  private failures = 0;
  private openedAt: number | null = null;
  /** When the half-open probe in flight started (null: none in flight). */
  private probeStartedAt: number | null = null;
  private lastFailure: string | null = null;
  private lastFailureAt: number | null = null;
  private opens = 0;

  constructor(private readonly policy: BreakerPolicy) {}

  /** May a request use the channel now? In half-open, true for the one probe (and again if that probe never reports back within a cool-down). */
  admit(now: number): boolean {
    if (this.state === 'closed') return true;
    if (this.state === 'open') {
      if (now - (this.openedAt ?? 0) < this.policy.coolDownMs) return false;
      this.state = 'half_open';
      this.probeStartedAt = now;
      return true;
    }
    if (this.probeStartedAt !== null && now - this.probeStartedAt < this.policy.coolDownMs) return false;
    this.probeStartedAt = now;
    return true;
  }

  /** Record an attempt's verdict; returns true when the state changed. */
  record(verdict: AttemptVerdict, now: number, reason?: string): boolean {
    const before = this.state;
    if (verdict === 'ok') {
      this.failures = 0;
      this.state = 'closed';
      this.openedAt = null;
      this.probeStartedAt = null;
    } else if (verdict === 'failed') {
      // A failure long after the last one starts a new streak: the channel is not "failing again and again".
      if (this.state === 'closed' && this.lastFailureAt !== null && now - this.lastFailureAt > this.policy.coolDownMs) this.failures = 0;
      this.lastFailureAt = now;
      this.failures++;
      this.lastFailure = reason ?? null;
      if (this.state !== 'closed' || this.failures >= this.policy.failureThreshold) {
        this.state = 'open';
        this.openedAt = now;
        this.probeStartedAt = null;
        if (before !== 'open') this.opens++;
      }
    } else if (this.state === 'half_open') {
      // The probe ended without a verdict (the client left): the next request probes.
      this.probeStartedAt = null;
    }
    return this.state !== before;
  }

  snapshot(now: number): BreakerSnapshot {
    // An open breaker past its cool-down reads as half-open: the next request probes it.
    const state = this.state === 'open' && now - (this.openedAt ?? 0) >= this.policy.coolDownMs ? 'half_open' : this.state;
    return {
      state,
      consecutive_failures: this.failures,
      opened_at: this.openedAt,
      probe_after: this.state === 'open' && this.openedAt !== null ? this.openedAt + this.policy.coolDownMs : null,
      last_failure: this.lastFailure,
      opens: this.opens,
    };
  }
}
