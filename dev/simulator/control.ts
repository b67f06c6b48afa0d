// Simulator state (faults, usage overrides, latency, request log) and the
// control API under /_control. JSON in and out, no auth. See README.md.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson } from './http';
import { DEFAULT_OUTPUT_TOKENS, setOutputLength } from './text';

export type Fault =
  | { type: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  | { type: 'reset' }
  | { type: 'hang' }
  | { type: 'cut'; after_chunks: number }
  | { type: 'error_frame'; after_chunks: number };

interface FaultEntry {
  fault: Fault;
  /** Requests left; null = until cleared. */
  remaining: number | null;
}

export const USAGE_FIELDS = [
  'prompt_tokens',
  'cached_tokens',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
  'server_tool_calls',
  'reasoning_tokens',
  'output_tokens',
] as const;
export type UsageOverride = Partial<Record<(typeof USAGE_FIELDS)[number], number>>;

export interface Latency {
  ttftMs: number;
  tokenDelayMs: number;
}

export interface RequestRecord {
  seq: number;
  /** Epoch milliseconds (formatted only when the log is read). */
  at: number;
  channel: string;
  method: string;
  path: string;
  search: string;
  headers: Record<string, string>;
  body: string;
  truncated: boolean;
}

interface ChannelLog {
  count: number;
  items: RequestRecord[];
}

export const LOG_KEEP = 50;
/** Logged bodies are cut at 1 MiB characters (vision payloads can be huge). */
export const LOG_BODY_MAX = 1 << 20;

/** Request headers kept in the request log. */
export const LOGGED_HEADERS = [
  'authorization',
  'x-api-key',
  'x-goog-api-key',
  'anthropic-version',
  'anthropic-beta',
  'openai-organization',
  'openai-project',
  'content-type',
  'accept',
  'user-agent',
  'idempotency-key',
  'x-request-id',
  'traceparent',
];

const LOGGED_SET = new Set(LOGGED_HEADERS);

/**
 * The LOGGED_HEADERS of a request, lower-cased, read from rawHeaders in one
 * pass (cheaper than materialising `req.headers`). Repeated headers are joined
 * with ", ".
 */
export function selectHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (!LOGGED_SET.has(name)) continue;
    const prev = out[name];
    out[name] = prev === undefined ? raw[i + 1] : prev + ', ' + raw[i + 1];
  }
  return out;
}

/** `*` as a fault channel matches every channel that has no fault of its own. */
export const ANY_CHANNEL = '*';

export class SimulatorState {
  private faults = new Map<string, FaultEntry[]>();
  private faultEntries = 0;
  private usage = new Map<string, UsageOverride>();
  private latency = new Map<string, Latency>();
  private logs = new Map<string, ChannelLog>();
  private seq = 0;
  globalLatency: Latency;

  constructor(readonly defaultLatency: Latency = { ttftMs: 0, tokenDelayMs: 0 }) {
    this.globalLatency = { ...defaultLatency };
  }

  // ---- faults: a queue per channel, the head applies first
  addFault(channel: string, fault: Fault, times: number | null): number {
    let q = this.faults.get(channel);
    if (!q) this.faults.set(channel, (q = []));
    q.push({ fault, remaining: times });
    this.faultEntries++;
    return q.length;
  }

  /** The fault for the next request on `channel` (consumes one use), or null. */
  takeFault(channel: string): Fault | null {
    if (this.faultEntries === 0) return null;
    let q = this.faults.get(channel);
    if (!q || q.length === 0) q = this.faults.get(ANY_CHANNEL);
    if (!q || q.length === 0) return null;
    const head = q[0];
    if (head.remaining !== null && --head.remaining <= 0) {
      q.shift();
      this.faultEntries--;
    }
    return head.fault;
  }

  listFaults(channel?: string): Record<string, { fault: Fault; remaining: number | null }[]> {
    const out: Record<string, { fault: Fault; remaining: number | null }[]> = {};
    for (const [ch, q] of this.faults) if ((!channel || ch === channel) && q.length) out[ch] = q.map((e) => ({ ...e }));
    return out;
  }

  clearFaults(channel?: string): void {
    if (channel === undefined) this.faults.clear();
    else this.faults.delete(channel);
    let n = 0;
    for (const q of this.faults.values()) n += q.length;
    this.faultEntries = n;
  }

  // ---- usage overrides
  setUsage(channel: string, u: UsageOverride): void {
    this.usage.set(channel, u);
  }
  usageFor(channel: string): UsageOverride | undefined {
    return this.usage.size === 0 ? undefined : this.usage.get(channel);
  }
  clearUsage(channel?: string): void {
    if (channel === undefined) this.usage.clear();
    else this.usage.delete(channel);
  }
  listUsage(): Record<string, UsageOverride> {
    return Object.fromEntries(this.usage);
  }

  // ---- latency: channel override, else global
  setLatency(channel: string | undefined, l: Latency): void {
    if (channel === undefined) this.globalLatency = l;
    else this.latency.set(channel, l);
  }
  latencyFor(channel: string): Latency {
    return (this.latency.size !== 0 && this.latency.get(channel)) || this.globalLatency;
  }
  clearLatency(channel?: string): void {
    if (channel === undefined) {
      this.latency.clear();
      this.globalLatency = { ...this.defaultLatency };
    } else this.latency.delete(channel);
  }

  // ---- request log
  record(channel: string, method: string, path: string, search: string, headers: Record<string, string>, body: string): void {
    let log = this.logs.get(channel);
    if (!log) this.logs.set(channel, (log = { count: 0, items: [] }));
    log.count++;
    const kept = body.length > LOG_BODY_MAX ? body.slice(0, LOG_BODY_MAX) : body;
    log.items.push({ seq: ++this.seq, at: Date.now(), channel, method, path, search, headers, body: kept, truncated: kept !== body });
    if (log.items.length > LOG_KEEP) log.items.shift();
  }

  requests(channel?: string): { count: number; requests: RequestRecord[] } {
    if (channel !== undefined) {
      const log = this.logs.get(channel);
      return { count: log?.count ?? 0, requests: log ? log.items.slice() : [] };
    }
    let count = 0;
    let all: RequestRecord[] = [];
    for (const log of this.logs.values()) {
      count += log.count;
      all = all.concat(log.items);
    }
    all.sort((a, b) => a.seq - b.seq);
    return { count, requests: all.slice(-LOG_KEEP) };
  }

  clearRequests(channel?: string): void {
    if (channel === undefined) this.logs.clear();
    else this.logs.delete(channel);
  }

  reset(): void {
    this.clearFaults();
    this.clearUsage();
    this.clearLatency();
    this.clearRequests();
  }
}

// ---------------------------------------------------------------- control API

const CHANNEL_RE = /^(?:[A-Za-z0-9._-]+|\*)$/;

class BadRequest extends Error {}

function bad(msg: string): never {
  throw new BadRequest(msg);
}

function nonNegInt(v: unknown, name: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) bad(`${name} must be a non-negative integer`);
  return v;
}

function channelOf(v: unknown, required: boolean): string | undefined {
  if (v === undefined || v === null || v === '') {
    if (required) bad('channel is required');
    return undefined;
  }
  if (typeof v !== 'string' || !CHANNEL_RE.test(v)) bad('channel must match [A-Za-z0-9._-]+ (or "*" for faults)');
  return v;
}

export function parseFault(v: unknown): Fault {
  if (!v || typeof v !== 'object') bad('fault must be an object');
  const f = v as Record<string, unknown>;
  switch (f.type) {
    case 'status': {
      const status = f.status;
      if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) bad('fault.status must be an integer 200..599');
      let headers: Record<string, string> | undefined;
      if (f.headers !== undefined) {
        if (!f.headers || typeof f.headers !== 'object' || Array.isArray(f.headers)) bad('fault.headers must be an object');
        headers = {};
        for (const [k, val] of Object.entries(f.headers as Record<string, unknown>)) headers[k.toLowerCase()] = String(val);
      }
      return { type: 'status', status, body: f.body, headers };
    }
    case 'reset':
    case 'hang':
      return { type: f.type };
    case 'cut':
    case 'error_frame':
      return { type: f.type, after_chunks: nonNegInt(f.after_chunks ?? 0, 'fault.after_chunks') };
    default:
      return bad('fault.type must be one of status, reset, hang, cut, error_frame');
  }
}

function parseUsage(v: unknown): UsageOverride {
  if (!v || typeof v !== 'object' || Array.isArray(v)) bad('usage must be an object');
  const out: UsageOverride = {};
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    if (!(USAGE_FIELDS as readonly string[]).includes(k)) bad(`unknown usage field ${k}; allowed: ${USAGE_FIELDS.join(', ')}`);
    if (val === null || val === undefined) continue;
    out[k as (typeof USAGE_FIELDS)[number]] = nonNegInt(val, `usage.${k}`);
  }
  return out;
}

async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const raw = await readBody(req);
  if (!raw.trim()) return {};
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    bad('body must be JSON');
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) bad('body must be a JSON object');
  return v as Record<string, unknown>;
}

function parseBodyForLog(raw: string): unknown {
  if (raw === '') return null;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/**
 * Handle a request under /_control (`path` has no query string). Resolves
 * false for a path it does not know, so extra handlers (e.g. /_control/media)
 * can take it.
 */
export async function handleControl(req: IncomingMessage, res: ServerResponse, path: string, url: URL, state: SimulatorState): Promise<boolean> {
  const method = req.method ?? 'GET';
  const qChannel = () => channelOf(url.searchParams.get('channel') ?? undefined, false);
  try {
    switch (`${method} ${path}`) {
      case 'GET /_control/health':
        sendJson(res, 200, { ok: true });
        return true;
      case 'POST /_control/faults': {
        const b = await jsonBody(req);
        const channel = channelOf(b.channel, true)!;
        const fault = parseFault(b.fault);
        const times = b.times === undefined || b.times === null ? null : nonNegInt(b.times, 'times');
        if (times === 0) bad('times must be at least 1 (omit it for "until cleared")');
        const queued = state.addFault(channel, fault, times);
        sendJson(res, 200, { ok: true, channel, fault, times, queued });
        return true;
      }
      case 'GET /_control/faults':
        sendJson(res, 200, { faults: state.listFaults(qChannel()) });
        return true;
      case 'DELETE /_control/faults':
        state.clearFaults(qChannel());
        sendJson(res, 200, { ok: true });
        return true;
      case 'POST /_control/usage': {
        const b = await jsonBody(req);
        const channel = channelOf(b.channel, true)!;
        const usage = parseUsage(b.usage);
        state.setUsage(channel, usage);
        sendJson(res, 200, { ok: true, channel, usage });
        return true;
      }
      case 'GET /_control/usage':
        sendJson(res, 200, { usage: state.listUsage() });
        return true;
      case 'DELETE /_control/usage':
        state.clearUsage(qChannel());
        sendJson(res, 200, { ok: true });
        return true;
      case 'POST /_control/latency': {
        const b = await jsonBody(req);
        const channel = channelOf(b.channel, false);
        const cur = channel === undefined ? state.globalLatency : state.latencyFor(channel);
        const l: Latency = {
          ttftMs: b.ttft_ms === undefined ? cur.ttftMs : nonNegInt(b.ttft_ms, 'ttft_ms'),
          tokenDelayMs: b.token_delay_ms === undefined ? cur.tokenDelayMs : nonNegInt(b.token_delay_ms, 'token_delay_ms'),
        };
        state.setLatency(channel, l);
        sendJson(res, 200, { ok: true, channel: channel ?? null, ttft_ms: l.ttftMs, token_delay_ms: l.tokenDelayMs });
        return true;
      }
      case 'DELETE /_control/latency':
        state.clearLatency(qChannel());
        sendJson(res, 200, { ok: true });
        return true;
      case 'GET /_control/requests': {
        const { count, requests } = state.requests(qChannel());
        sendJson(res, 200, {
          count,
          requests: requests.map((r) => ({
            method: r.method,
            path: r.path,
            query: Object.fromEntries(new URLSearchParams(r.search)),
            headers: r.headers,
            body: r.truncated ? r.body : parseBodyForLog(r.body),
            ...(r.truncated ? { body_truncated: true } : {}),
            channel: r.channel,
            at: new Date(r.at).toISOString(),
          })),
        });
        return true;
      }
      case 'DELETE /_control/requests':
        state.clearRequests(qChannel());
        sendJson(res, 200, { ok: true });
        return true;
      case 'POST /_control/output': {
        const b = await jsonBody(req);
        const tokens = nonNegInt(b.tokens, 'tokens');
        if (tokens < 1 || tokens > 100_000) throw new BadRequest('tokens must be 1 to 100000');
        setOutputLength(tokens);
        sendJson(res, 200, { ok: true, tokens });
        return true;
      }
      case 'POST /_control/reset':
        setOutputLength(DEFAULT_OUTPUT_TOKENS);
        state.reset();
        sendJson(res, 200, { ok: true });
        return true;
      default:
        return false;
    }
  } catch (e) {
    if (e instanceof BadRequest) {
      sendJson(res, 400, { error: e.message });
      return true;
    }
    throw e;
  }
}
