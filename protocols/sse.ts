import { StringDecoder } from 'node:string_decoder';
import type { SseEvent } from './types';

/**
 * Incremental server-sent-events parser (WHATWG event-stream rules): feed it
 * the body chunks as they arrive, get back every event completed so far.
 * Handles `\n`, `\r\n` and `\r` line ends (also split across chunks), UTF-8
 * split across chunks, comment lines, multi-line `data:` and a leading BOM.
 * `id:` and `retry:` are not needed by the gateway and are ignored.
 */
export class SseParser {
  /**
   * Node's UTF-8 decoder for chunked input (keeps a split character's bytes for the next chunk): lighter
   * per stream than a TextDecoder in streaming mode (an ICU converter each) and no options object per call.
   */
  private readonly decoder = new StringDecoder('utf8');
  private buffer = '';
  private started = false;
  /** The previous chunk ended with `\r`: a `\n` opening the next chunk belongs to it. */
  private pendingCr = false;
  private data: string[] = [];
  private eventType: string | undefined;

  /**
   * Nothing of an event is pending: every byte pushed so far was dispatched or discarded, so the
   * next chunk starts a new event (a relay may reframe a chunk's events without losing a byte).
   * Only meaningful after a chunk whose last byte was a line feed (no UTF-8 bytes held back).
   */
  get idle(): boolean {
    return this.buffer.length === 0 && this.data.length === 0 && this.eventType === undefined && !this.pendingCr;
  }

  push(chunk: Uint8Array | string): SseEvent[] {
    let text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.pendingCr && text.length > 0) {
      this.pendingCr = false;
      if (text.charCodeAt(0) === 10) text = text.slice(1);
    }
    this.buffer = this.buffer.length === 0 ? text : this.buffer + text;
    const out: SseEvent[] = [];
    let start = 0;
    const buf = this.buffer;
    // Line ends found with indexOf (a native scan), not a loop over every character: a chunk of a
    // stream is a few kilobytes of JSON with a line end every hundred or so. `\r` is rare: one scan.
    let lf = buf.indexOf('\n');
    let cr = buf.indexOf('\r');
    while (lf !== -1 || cr !== -1) {
      let i = cr === -1 || (lf !== -1 && lf < cr) ? lf : cr;
      this.line(buf.slice(start, i), out);
      if (i === cr) {
        if (i + 1 === buf.length) this.pendingCr = true;
        else if (buf.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
      if (lf !== -1 && lf < start) lf = buf.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = buf.indexOf('\r', start);
    }
    this.buffer = start === 0 ? buf : buf.slice(start);
    return out;
  }

  /**
   * The body ended. The standard discards an unterminated event; we dispatch
   * it when it has data, because upstreams sometimes omit the final blank
   * line after `data: [DONE]` and the gateway bills on what was received.
   */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    const tail = this.decoder.end();
    if (tail) out.push(...this.push(tail));
    if (this.buffer.length > 0) {
      this.line(this.buffer, out);
      this.buffer = '';
    }
    this.dispatch(out);
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line.length === 0) return this.dispatch(out);
    if (line.charCodeAt(0) === 58 /* : */) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.eventType = value;
  }

  private dispatch(out: SseEvent[]): void {
    if (this.data.length > 0) {
      const data = this.data.length === 1 ? this.data[0] : this.data.join('\n');
      out.push(this.eventType ? { event: this.eventType, data } : { data });
    }
    this.data = [];
    this.eventType = undefined;
  }
}

/** One SSE frame: `event: X\n` (when given) then one `data:` line per line of data, then a blank line. */
export function formatSse(data: unknown, event?: string): string {
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  const head = event ? `event: ${event}\n` : '';
  if (!text.includes('\n') && !text.includes('\r')) return `${head}data: ${text}\n\n`;
  return `${head}${text.split(/\r\n|\r|\n/).map((l) => `data: ${l}`).join('\n')}\n\n`;
}

/** The chat-completions stream terminator. */
export const SSE_DONE = 'data: [DONE]\n\n';
