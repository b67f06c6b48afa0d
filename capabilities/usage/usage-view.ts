import { formatCredits } from '../../domain/money';
import type { UsageDoc } from './store';

/* One usage row as every reader shows it: the usage API and its CSV export, the console, the call log. */

/** CSV export columns, in the order of spec 2 section 2.5. */
export const CSV_COLUMNS = [
  'id', 'created_at', 'key_name', 'key_prefix', 'model', 'status', 'error_code', 'error_message', 'input_tokens',
  'output_tokens', 'cached_tokens', 'unit_count', 'unit_type', 'cost_usd', 'latency_ms', 'request_id', 'task_id',
  'submitted_at', 'attempts_count', 'result_urls', 'result_expires_at',
] as const;

/** The CSV columns that hold numbers (counts, credits): written as they are; every other column is text (domain/csv-cell.ts). */
export const CSV_NUMBER_COLUMNS: ReadonlySet<string> = new Set([
  'input_tokens', 'output_tokens', 'cached_tokens', 'unit_count', 'cost_usd', 'latency_ms', 'attempts_count',
]);

/**
 * A row as the usage API, the call log and the console show it: the CSV's columns, the server-side tool calls a
 * chat turn was charged for (spec 1 section 2.4 rule 6 names that usage-log column; the CSV keeps spec 2's list),
 * and whether it was billed on the estimate (`usage_estimated`, issue 26).
 */
export type UsageRowView = Record<(typeof CSV_COLUMNS)[number], string | number | null> & { server_tool_calls: number; usage_estimated: boolean };

export function rowView(r: UsageDoc): UsageRowView {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    id: r._id, created_at: iso(r.created_at), key_name: r.key_name, key_prefix: r.key_prefix, model: r.model,
    status: r.status, error_code: r.error_code, error_message: r.error_message, input_tokens: r.input_tokens,
    output_tokens: r.output_tokens, cached_tokens: r.cached_tokens, unit_count: r.unit_count, unit_type: r.unit_type,
    cost_usd: formatCredits(r.status === 'in_flight' ? r.reserved_nano : r.cost_nano), latency_ms: r.latency_ms,
    request_id: r.request_id, task_id: r.task_id, submitted_at: iso(r.submitted_at), attempts_count: r.attempts_count,
    result_urls: (r.result_urls ?? []).join('|'), result_expires_at: iso(r.result_expires_at),
    server_tool_calls: r.server_tool_calls ?? 0,
    // Billed on the estimate (an interrupted stream, usage missing or under-reported), not the upstream's usage.
    usage_estimated: r.usage_estimated ?? false,
  };
}
