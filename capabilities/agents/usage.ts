import { withUsageDefaults, type UsageModels, type UsageDoc } from '../usage/store';
import type { UsageRecorder } from '../usage/usage';

export interface AgentUsageDay {
  date: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  cost_nano: number;
}

export interface AgentUsage {
  agent_id: string;
  since: string;
  totals: Omit<AgentUsageDay, 'date'>;
  days: AgentUsageDay[];
}

/**
 * Per-agent usage (spec 3 section 5): requests, tokens and cost by UTC day,
 * summed from the usage rows agent calls write (`agent_id` on the row).
 * Refused calls count as requests at cost 0, as in the account's usage.
 */
export class AgentUsageReport {
  constructor(private readonly db: UsageModels, private readonly usage: UsageRecorder) {}

  async byDay(agentId: string, days: number, now = new Date()): Promise<AgentUsage> {
    const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1)));
    await this.usage.flush();
    const rows = this.db.Usage.find({ agent_id: agentId, created_at: { $gte: since } })
      .select({ input_tokens: 1, output_tokens: 1, cached_tokens: 1, cost_nano: 1, created_at: 1 })
      .lean()
      .cursor();
    const byDate = new Map<string, AgentUsageDay>();
    const totals = { requests: 0, input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_nano: 0 };
    for await (const raw of rows as AsyncIterable<Pick<UsageDoc, 'input_tokens' | 'output_tokens' | 'cached_tokens' | 'cost_nano' | 'created_at'>>) {
      const r = withUsageDefaults(raw);
      const date = r.created_at.toISOString().slice(0, 10);
      let day = byDate.get(date);
      if (!day) byDate.set(date, (day = { date, requests: 0, input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_nano: 0 }));
      for (const t of [day, totals]) {
        t.requests += 1;
        t.input_tokens += r.input_tokens;
        t.output_tokens += r.output_tokens;
        t.cached_tokens += r.cached_tokens;
        t.cost_nano += r.cost_nano;
      }
    }
    return { agent_id: agentId, since: since.toISOString(), totals, days: [...byDate.values()].sort((a, b) => a.date.localeCompare(b.date)) };
  }
}
