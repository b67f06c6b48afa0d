import type { Dispatcher } from 'undici';
import { createUsageAccumulator, formatSse, SseParser, type Protocol, type SseEvent, type Translator, type UsageAccumulator } from '../../protocols';
import { usageToBill } from '../../domain/usage-estimate';
import type { Ctx } from '../context';
import { promptBytes, toTokenUsage, type ChatCall, type StopReason } from './call';
import type { ServiceDeps } from '../deps';
import { failAfterAnswer, settleDurably } from './settle';
import { openAiErrorBody } from '../../domain/error-bodies';
import { armed, failpoint } from '../../platform/failpoints';
import { costReport, type CostReport } from '../../domain/cost-report';
import { isUsageFrame, rewriteUsageFrame, splitFrames } from './cost-fields';
import { flattenStoredHead } from '../response-headers';
import { discardBody } from '../../platform/upstream';

/** The one error chunk of the chat-completions built-in-tool path (spec 1 section 6). */
export const BUILTIN_TOOL_STREAM_ERROR =
  `data: ${JSON.stringify(openAiErrorBody({ message: 'upstream stream failed', type: 'api_error', code: 'upstream_error' }))}\n\ndata: [DONE]\n\n`;

/** An event as one SSE frame; data of several lines (an upstream may split its JSON so) keeps one `data:` line each. */
function frame(ev: SseEvent): string {
  return formatSse(ev.data, ev.event);
}

/** A chat-completions chunk that only carries usage (choices: []), which the client did not ask for. */
function isUsageOnlyChunk(ev: SseEvent): boolean {
  return ev.data.includes('"choices":[]') && ev.data.includes('"usage"');
}

/** The upstream answer being relayed, and how the call got it. */
export interface RelayUpstream {
  res: Dispatcher.ResponseData;
  /** Where the body's chunks are read from, when not from `res.body` itself (a body read ahead: platform/read-ahead.ts). */
  chunks?: AsyncIterable<Buffer>;
  translation: Translator<any> | undefined;
  upstream: Protocol;
  /** The channel's id (counters of upstreams that misreport usage). */
  channel: string;
  attempts: number;
  /** Why the request was stopped, if it was: the client left, or the deadline passed. */
  stopped: StopReason;
}

/**
 * Relay an upstream SSE stream to the client, event by event, translating
 * when needed, while the usage accumulator watches for billing. Errors after
 * the 200 cannot change the status: the stream just ends (with an injected
 * error chunk only on the built-in-tool path). Interrupted turns are billed
 * on actual usage, or estimated from output characters, never for an empty
 * output.
 */
export async function relayStream(
  env: ServiceDeps,
  ctx: Ctx,
  call: ChatCall,
  s: RelayUpstream,
): Promise<void> {
  ctx.respond = false;
  ctx.status = 200;
  const out = ctx.res;
  const array = call.jsonArrayStream === true;
  out.writeHead(200, {
    'content-type': array ? 'application/json; charset=utf-8' : 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  flattenStoredHead(out);
  const parser = new SseParser();
  const acc = createUsageAccumulator(s.upstream);
  const enc = s.translation?.stream({ model: call.model.id, includeUsage: call.includeUsage });
  const dropUsageChunk = !enc && call.client === 'chat-completions' && !call.includeUsage;
  let failure: unknown;
  let items = 0;
  let sawDone = false;
  let settled = false;

  // Same protocol with nothing to drop or reframe: the upstream bytes go out untouched (one write per
  // upstream chunk) and are only parsed for billing. Not on the built-in-tool path, whose error chunk
  // must never land after half an event.
  const passthrough = !enc && !dropUsageChunk && !array && !call.builtinToolPath;

  const write = async (data: string | Buffer) => {
    if (data.length === 0 || out.destroyed) return;
    if (!out.write(data)) await new Promise<void>((resolve) => {
      const done = () => {
        out.off('drain', done);
        out.off('close', done);
        resolve();
      };
      out.once('drain', done);
      out.once('close', done);
    });
  };
  // The protocol's last event: `[DONE]` on chat-completions (usage comes after the finish_reason),
  // message_stop, response.completed or incomplete, the candidate's finishReason.
  const ended = () => (s.upstream === 'chat-completions' ? sawDone : acc.completed);
  // A generate-content JSON array stream (no alt=sse): `[` item `,\r\n` item ... `]`, as Google frames it.
  const frameOf = (ev: SseEvent) => (array ? (items++ === 0 ? '[' : ',\r\n') + ev.data : frame(ev));
  /**
   * Where the batch framed last reached the protocol's end: the index of the event that ended the
   * stream and the length of the frames before it (-1: the stream did not end in that batch).
   */
  let endEvent = -1;
  let endCut = -1;
  /** Account every event; return what the client gets for them (all frames of one upstream chunk in one write). */
  const framesOf = (events: SseEvent[]): string => {
    usageInChunk = false;
    let text = '';
    endEvent = -1;
    endCut = -1;
    for (let i = 0; i < events.length; i++) {
      const ev = events[i];
      const wasEnded = endEvent !== -1 || ended();
      const before = text.length;
      acc.push(ev);
      if (ev.data.length === 6 && ev.data === '[DONE]') sawDone = true;
      if (passthrough && !usageInChunk && isUsageFrame(call.client, ev.data)) usageInChunk = true;
      if (!wasEnded && ended()) {
        endEvent = i;
        endCut = before;
      }
      if (enc) text += enc.push(ev).frames.join('');
      else if (!passthrough && !(dropUsageChunk && isUsageOnlyChunk(ev))) text += frameOf(ev);
    }
    return text;
  };

  /**
   * Bill the turn before its last event reaches the client: the charge is written ahead (durable) by
   * the time the client can see the stream end, so a gateway that dies right after is no loss. What
   * came before that event is written as it arrives, also when it arrived in the same chunk.
   */
  const settle = async () => {
    settled = true;
    try {
      await settleStream(env, ctx, call, s, acc, failure);
    } finally {
      // The charge is known: the frame that carries usage (held until now) goes out with its cost.
      await hold.release(costReport(ctx.state.charge));
    }
  };
  /** Passthrough: one of the chunk's events carries the usage (so the chunk is reframed, not copied). */
  let usageInChunk = false;
  const hold = new UsageFrameHold(call.client, array, write);
  const emit = (text: string) => hold.emit(text);
  /** A passthrough chunk's frames, rebuilt from its events (endCut: where the event that ended the stream starts). */
  const reframe = (events: SseEvent[]): string => {
    let text = '';
    for (let i = 0; i < events.length; i++) {
      if (i === endEvent) endCut = text.length;
      text += frame(events[i]);
    }
    return text;
  };
  try {
    for await (const chunk of s.chunks ?? (s.res.body as AsyncIterable<Buffer>)) {
      // Whether this chunk starts and ends on event boundaries (the upstream's whole answer in one chunk,
      // typically): then a passthrough chunk can be reframed event by event.
      const alignedStart = parser.idle;
      const events = parser.push(chunk);
      let text = framesOf(events);
      const ending = !settled && ended();
      // A passthrough chunk is copied as it came only when it holds whole events, none of which carries
      // the usage or ends the stream; otherwise its events go out as frames (a partial event waits in the
      // parser), so the usage frame can take its cost and nothing goes out twice.
      const raw = passthrough && alignedStart && !usageInChunk && !ending && chunk[chunk.length - 1] === 10 && parser.idle;
      if (passthrough && !raw) text = reframe(events);
      if (ending) {
        // Everything before the event that ended the stream goes out now; that event (the client's sign
        // that the stream is complete: `[DONE]`, message_stop, ...) only once the charge is durable.
        const early = text.slice(0, Math.max(0, endCut));
        const rest = text.slice(early.length);
        await emit(early);
        await settle();
        await emit(rest);
      } else if (raw) await write(chunk);
      else await emit(text);
      if (s.stopped.client) break;
    }
    if (!s.stopped.client) {
      const last = parser.end();
      const text = framesOf(last);
      await emit(passthrough ? reframe(last) : text);
      if (enc) await emit(enc.end().join(''));
    }
  } catch (err) {
    failure = err;
  }

  const clientGone = s.stopped.client || out.destroyed;
  if (clientGone) discardBody(s.res.body);
  if (!settled) await settle();
  const completed = acc.completed && !failure && !clientGone;
  if (!completed && !clientGone && call.builtinToolPath) await write(BUILTIN_TOOL_STREAM_ERROR);
  if (completed && array) await write(items === 0 ? '[]' : '\n]');

  failAfterAnswer(ctx);
  if (!out.writableEnded) out.end();
}

/**
 * Bill a relayed stream on what it delivered: the upstream's usage, or the
 * estimate when it left usage out, under-reported it or the turn was cut
 * (the client left, the deadline passed, the upstream failed or ended early).
 */
async function settleStream(env: ServiceDeps, ctx: Ctx, call: ChatCall, s: RelayUpstream, acc: UsageAccumulator, failure: unknown): Promise<void> {
  if (armed('chat.stream-settling')) {
    // Test hook: die once the settlement has begun, after what was written so far left the process
    // (http flushes a response's first write on the next tick).
    await new Promise((resolve) => setImmediate(resolve));
    failpoint('chat.stream-settling');
  }
  const clientGone = s.stopped.client || ctx.res.destroyed;
  const completed = acc.completed && !failure && !clientGone;
  // The output's characters are counted only if the bill depends on them (protocols/usage: chunks that
  // cannot change the usage are parsed on demand).
  const billed = usageToBill({
    reported: toTokenUsage(acc.usage),
    get outputChars() {
      return acc.outputChars;
    },
    outputCharsAtMost: acc.outputCharsAtMost,
    promptBytes: promptBytes(call),
    completed,
  });
  const reason = clientGone ? 'client_closed' : s.stopped.deadline ? 'upstream_timeout' : failure ? 'upstream_cut' : !completed ? 'upstream_incomplete' : undefined;
  await settleDurably(env, ctx, call.model, billed.usage, {
    status: completed ? 'success' : 'interrupted',
    attempts: s.attempts,
    errorCode: reason,
    errorMessage: reason ? `stream ended early (${reason})` : undefined,
    billing: {
      estimated: billed.estimated,
      misreport: billed.misreport,
      get outputChars() {
        return acc.outputChars;
      },
      channel: s.channel,
    },
  });
}

/**
 * The frames a client gets while the charge is not known yet: everything up
 * to the frame that carries usage goes out at once; that frame and what
 * follows it wait, and go out with the cost fields once `release` gives the
 * charge (domain/cost-report.ts).
 */
class UsageFrameHold {
  private held = '';
  private report: CostReport | undefined;

  constructor(
    private readonly client: ChatCall['client'],
    private readonly array: boolean,
    private readonly write: (text: string) => Promise<void>,
  ) {}

  async emit(text: string): Promise<void> {
    if (!text) return;
    if (this.report) return this.write(this.withCost(text));
    if (this.held) {
      this.held += text;
      return;
    }
    if (!isUsageFrame(this.client, text)) return this.write(text);
    const frames = splitFrames(text, this.array);
    const at = frames.findIndex((f) => isUsageFrame(this.client, f));
    if (at === -1) return this.write(text);
    this.held = frames.slice(at).join('');
    await this.write(frames.slice(0, at).join(''));
  }

  /** The charge is known: what was held goes out, its usage frame with the cost. */
  async release(report: CostReport): Promise<void> {
    this.report = report;
    const h = this.held;
    this.held = '';
    await this.write(this.withCost(h));
  }

  /** Text with every usage frame in it given the cost fields (once the charge is known). */
  private withCost(text: string): string {
    const r = this.report;
    if (!r || !text || !isUsageFrame(this.client, text)) return text;
    return splitFrames(text, this.array).map((f) => (isUsageFrame(this.client, f) ? rewriteUsageFrame(this.client, f, r) : f)).join('');
  }
}
