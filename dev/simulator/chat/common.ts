// What every chat route gets, and the shared respond path (latency knobs and
// the cut / error_frame faults). Vendor shapes live in the sibling files.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SimulatorState, UsageOverride } from '../control';
import { sendBody, sendHalfThenDestroy, delay, JSON_TYPE } from '../http';
import { sendStream, type Frames, type StreamFault } from '../sse';
import type { Dialect } from '../errors';
import { outputLength } from '../text';

export interface ChatCall {
  req: IncomingMessage;
  res: ServerResponse;
  channel: string;
  /** Path without the /ch/{channel} prefix and without the query string. */
  path: string;
  /** Raw query string including '?', or ''. */
  search: string;
  /** The request headers named in LOGGED_HEADERS (auth and version headers among them), lower-cased. */
  headers: Record<string, string>;
  body: string;
  state: SimulatorState;
  /** A cut / error_frame fault taken for this request, applied while answering. */
  fault: StreamFault | null;
  /** Route parameters (the Gemini model and method). */
  params: { model?: string; method?: string };
}

export interface ChatRoute {
  dialect: Dialect;
  handle(call: ChatCall): void;
}

/** JSON.parse, or undefined when the body is not a JSON object. */
export function parseObject(body: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(body);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Plans depend on the request body (never on the channel) and the answers'
 * length (POST /_control/output, which empties every cache), so a small
 * cache keyed by route + body skips parsing and planning for repeated bodies
 * (benchmarks, retries across channels).
 */
export function planCache<P>(max = 256): (key: string, build: () => P | undefined) => P | undefined {
  const cache = new Map<string, P>();
  let length = outputLength();
  return (key, build) => {
    if (length !== outputLength()) {
      cache.clear();
      length = outputLength();
    }
    const hit = cache.get(key);
    if (hit !== undefined) return hit;
    const p = build();
    if (p !== undefined && key.length <= 8192) {
      if (cache.size >= max) cache.clear();
      cache.set(key, p);
    }
    return p;
  };
}

/** Answer a non-streaming request (after ttft + tokens x delay; halves the body on `cut`). */
export function respondJson(call: ChatCall, status: number, body: string, outputTokens: number, headers?: readonly string[]): void {
  const lat = call.state.latencyFor(call.channel);
  const wait = status < 300 ? lat.ttftMs + lat.tokenDelayMs * outputTokens : 0;
  if (wait <= 0) sendNow(call, status, body, headers);
  else void delay(call.res, wait).then((alive) => alive && sendNow(call, status, body, headers));
}

function sendNow(call: ChatCall, status: number, body: string, headers?: readonly string[]): void {
  if (call.fault && call.fault.type === 'cut') sendHalfThenDestroy(call.res, status, body, JSON_TYPE, headers);
  else sendBody(call.res, status, body, JSON_TYPE, headers);
}

/** Answer with a vendor error (validation, auth): no latency, but a `cut` still cuts. */
export function respondError(call: ChatCall, status: number, body: string, headers?: readonly string[]): void {
  respondJson(call, status, body, 0, headers);
}

export interface StreamShape {
  errorFrame: string;
  contentType?: string;
  headers?: readonly string[];
  open?: string;
  separator?: string;
  close?: string;
}

export function respondStream(call: ChatCall, frames: Frames, shape: StreamShape): void {
  const lat = call.state.latencyFor(call.channel);
  sendStream(call.res, frames, { ttftMs: lat.ttftMs, tokenDelayMs: lat.tokenDelayMs, fault: call.fault, ...shape });
}

export function usageOf(call: ChatCall): UsageOverride | undefined {
  return call.state.usageFor(call.channel);
}

/** A request header by lower-case name (only the LOGGED_HEADERS are available). */
export function header(call: ChatCall, name: string): string | undefined {
  return call.headers[name];
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export interface ToolCallPlan {
  name: string;
  arguments: string;
  pieces: string[];
}
