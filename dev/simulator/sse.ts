// Server-sent events: frame formatting and a stream writer that applies the
// latency knobs and the `cut` / `error_frame` faults.
import type { ServerResponse } from 'node:http';
import { delay, writeThenDestroy } from './http';

/** `data: {json}\n\n` (OpenAI chat, Gemini alt=sse). */
export function dataFrame(value: unknown): string {
  return 'data: ' + JSON.stringify(value) + '\n\n';
}

/** `event: name\ndata: {json}\n\n` (Anthropic, OpenAI Responses). */
export function eventFrame(event: string, value: unknown): string {
  return 'event: ' + event + '\ndata: ' + JSON.stringify(value) + '\n\n';
}

export const DONE_FRAME = 'data: [DONE]\n\n';

export const SSE_CONTENT_TYPE = 'text/event-stream; charset=utf-8';

/**
 * A stream in three parts: `head` frames go out at once (message_start,
 * response.created...), the first of `tokens` after the time to first token and
 * each later one after the per-token delay, `tail` right after the last token
 * (or after the time to first token when there are no tokens).
 */
export interface Frames {
  head: string[];
  tokens: string[];
  tail: string[];
}

export interface StreamFault {
  type: 'cut' | 'error_frame';
  after_chunks: number;
}

export interface StreamOptions {
  ttftMs: number;
  tokenDelayMs: number;
  fault: StreamFault | null;
  /** The vendor's mid-stream error frame, sent by the `error_frame` fault. */
  errorFrame: string;
  contentType?: string;
  headers?: readonly string[];
  /** Wraps the frames, e.g. Gemini's JSON-array stream: `[`, `,\r\n`, `]`. */
  open?: string;
  separator?: string;
  close?: string;
}

export function sendStream(res: ServerResponse, frames: Frames, o: StreamOptions): void {
  if (res.destroyed) return;
  const h: string[] = ['content-type', o.contentType ?? SSE_CONTENT_TYPE, 'cache-control', 'no-cache'];
  if (o.headers) for (let i = 0; i < o.headers.length; i++) h.push(o.headers[i]);
  const all = frames.head.concat(frames.tokens, frames.tail);
  if (o.separator) for (let i = 1; i < all.length; i++) all[i] = o.separator + all[i];
  if (o.open) all[0] = o.open + (all[0] ?? '');
  if (o.close && !o.fault) all[all.length - 1] = (all[all.length - 1] ?? '') + o.close;

  const limit = o.fault ? Math.max(0, Math.min(all.length, Math.floor(o.fault.after_chunks))) : all.length;
  const finish = (sent: string) => {
    if (!o.fault) res.end(sent);
    else if (o.fault.type === 'cut') writeThenDestroy(res, sent);
    else res.end(sent + o.errorFrame);
  };

  res.writeHead(200, h);
  if (o.ttftMs <= 0 && o.tokenDelayMs <= 0) {
    finish(limit === all.length ? all.join('') : all.slice(0, limit).join(''));
    return;
  }
  void paced(res, all, limit, frames.head.length, frames.tokens.length, o, finish);
}

async function paced(
  res: ServerResponse,
  all: string[],
  limit: number,
  headLen: number,
  tokenLen: number,
  o: StreamOptions,
  finish: (rest: string) => void,
): Promise<void> {
  // Delay before frame i: ttft before the first token (or the tail if no tokens), token delay between tokens.
  const firstWait = headLen;
  let pending = '';
  for (let i = 0; i < limit; i++) {
    let wait = 0;
    if (i === firstWait) wait = o.ttftMs;
    else if (i > headLen && i < headLen + tokenLen) wait = o.tokenDelayMs;
    if (wait > 0) {
      if (pending) {
        res.write(pending);
        pending = '';
      } else if (i === firstWait) res.flushHeaders();
      if (!(await delay(res, wait))) return;
    }
    pending += all[i];
  }
  finish(pending);
}
