import type { Dispatcher } from 'undici';
import { createUsageAccumulator, formatSse, SseParser, type Protocol, type SseEvent, type Translator } from '../../protocols';
import { usageToBill } from '../../domain/usage-estimate';
import type { Ctx } from '../context';
import type { ChatCall, ChatEnv, StopReason } from './pipeline';
import { promptBytes, toTokenUsage } from './pipeline';
import { failAfterAnswer, settleDurably } from './settle';
import { openAiErrorBody } from '../../domain/error-bodies';
import { armed, failpoint } from '../../infra/failpoints';

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

/**
 * Relay an upstream SSE stream to the client, event by event, translating
 * when needed, while the usage accumulator watches for billing. Errors after
 * the 200 cannot change the status: the stream just ends (with an injected
 * error chunk only on the built-in-tool path). Interrupted turns are billed
 * on actual usage, or estimated from output characters, never for an empty
 * output.
 */
export async function relayStream(
  env: ChatEnv,
  ctx: Ctx,
  call: ChatCall,
  s: {
    res: Dispatcher.ResponseData;
    translation: Translator<any> | undefined;
    upstream: Protocol;
    /** The channel's id (counters of upstreams that misreport usage). */
    channel: string;
    attempts: number;
    /** Why the request was stopped, if it was: the client left, or the deadline passed. */
    stopped: StopReason;
  },
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
    let text = '';
    endEvent = -1;
    endCut = -1;
    for (let i = 0; i < events.length; i++) {
      const ev = events[i];
      const wasEnded = endEvent !== -1 || ended();
      const before = text.length;
      acc.push(ev);
      if (ev.data.length === 6 && ev.data === '[DONE]') sawDone = true;
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
    if (armed('chat.stream-settling')) {
      // Test hook: die once the settlement has begun, after what was written so far left the process
      // (http flushes a response's first write on the next tick).
      await new Promise((resolve) => setImmediate(resolve));
      failpoint('chat.stream-settling');
    }
    const clientGone = s.stopped.client || out.destroyed;
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
  };
  try {
    for await (const chunk of s.res.body as AsyncIterable<Buffer>) {
      // Whether this chunk starts and ends on event boundaries (the upstream's whole answer in one chunk,
      // typically): then a passthrough chunk can be reframed event by event.
      const alignedStart = passthrough && !settled && parser.idle;
      const events = parser.push(chunk);
      const text = framesOf(events);
      if (!settled && ended()) {
        // Everything before the event that ended the stream goes out now; that event (the client's sign
        // that the stream is complete: `[DONE]`, message_stop, ...) only once the charge is durable.
        let early = '';
        let rest: string | Buffer = chunk;
        if (!passthrough) {
          early = text.slice(0, Math.max(0, endCut));
          rest = text.slice(early.length);
        } else if (alignedStart && endEvent > 0 && chunk[chunk.length - 1] === 10 && parser.idle) {
          // Every byte of the chunk belongs to one of `events`: they can go out as frames instead.
          let tail = '';
          for (let i = 0; i < events.length; i++) {
            if (i < endEvent) early += frame(events[i]);
            else tail += frame(events[i]);
          }
          rest = tail;
        }
        await write(early);
        await settle();
        await write(rest);
      } else await write(passthrough ? chunk : text);
      if (s.stopped.client) break;
    }
    if (!s.stopped.client) {
      await write(framesOf(parser.end()));
      if (enc) await write(enc.end().join(''));
    }
  } catch (err) {
    failure = err;
  }

  const clientGone = s.stopped.client || out.destroyed;
  if (clientGone) s.res.body.destroy();
  if (!settled) await settle();
  const completed = acc.completed && !failure && !clientGone;
  if (!completed && !clientGone && call.builtinToolPath) await write(BUILTIN_TOOL_STREAM_ERROR);
  if (completed && array) await write(items === 0 ? '[]' : '\n]');

  failAfterAnswer(ctx);
  if (!out.writableEnded) out.end();
}
