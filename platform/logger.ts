import pino, { type DestinationStream, type Logger as Pino } from 'pino';
import { trace } from '@opentelemetry/api';

/**
 * Structured JSON logs (pino), one line per event, with the trace id when
 * there is one. No API key plaintext can reach a line: the key-carrying
 * headers are censored wherever they appear (`authorization`, `x-api-key`,
 * `x-goog-api-key`, as fields or inside `headers`), and every string value is
 * scrubbed of a `key=` query parameter and of anything shaped like a key.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
  /** Whether a line at this level would be written (a caller that builds a costly line asks first). */
  enabled?(level: Exclude<LogLevel, 'silent'>): boolean;
}

export const REDACTED = '[redacted]';

/** Fields whose value is censored whole, at any depth (as a field, inside `headers`, in `req.headers`, ...), whatever their case. */
const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'x-goog-api-key', 'proxy-authorization', 'cookie']);

/** `key=...` in a query string (Google's way of sending the key) and key-shaped tokens anywhere in a string. */
const KEY_QUERY = /([?&;]key=)[^&#\s"']*/gi;
const KEY_SHAPED = /\b(sk-[A-Za-z0-9_-]{6,}|AIza[0-9A-Za-z_-]{20,}|Bearer\s+[A-Za-z0-9._~+/=-]{8,})/g;

export function scrubSecrets(text: string): string {
  return text.replace(KEY_QUERY, `$1${REDACTED}`).replace(KEY_SHAPED, (m) => (m.startsWith('Bearer') ? `Bearer ${REDACTED}` : REDACTED));
}

function scrubValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return scrubSecrets(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return { name: value.name, message: scrubSecrets(value.message), stack: value.stack && scrubSecrets(value.stack) };
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_HEADERS.has(k.toLowerCase()) ? REDACTED : scrubValue(v, depth + 1);
  return out;
}

/** A logger writing to stdout (or `destination`, for tests). */
export function createLogger(level: LogLevel = 'info', base: Record<string, unknown> = {}, destination?: DestinationStream): Logger {
  const root = pino(
    {
      level,
      base,
      messageKey: 'msg',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        // Censors the key-carrying fields and scrubs every string in one pass. Not pino's `redact`: its
        // wildcard paths cost 16 us a line, more than the rest of a line together, and the access log
        // writes a line per request (at the default level, info).
        log: (obj) => scrubValue(obj, 0) as Record<string, unknown>,
      },
      mixin: traceIds,
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
  return wrap(root);
}

/** The OpenTelemetry trace and span of the line, when tracing is on and a span is active (platform/tracing/): logs and traces join on trace_id. */
function traceIds(): Record<string, string> {
  const span = trace.getActiveSpan();
  // pino merges the line's fields into the returned object: a fresh one each time.
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** A line below the logger's level costs nothing: the message is scrubbed only when it will be written (the access log runs on every request). */
function wrap(p: Pino): Logger {
  return {
    debug: (msg, fields) => void (p.isLevelEnabled('debug') && p.debug(fields ?? {}, scrubSecrets(msg))),
    info: (msg, fields) => void (p.isLevelEnabled('info') && p.info(fields ?? {}, scrubSecrets(msg))),
    warn: (msg, fields) => void (p.isLevelEnabled('warn') && p.warn(fields ?? {}, scrubSecrets(msg))),
    error: (msg, fields) => void (p.isLevelEnabled('error') && p.error(fields ?? {}, scrubSecrets(msg))),
    child: (fields) => wrap(p.child(fields)),
    enabled: (level) => p.isLevelEnabled(level),
  };
}
