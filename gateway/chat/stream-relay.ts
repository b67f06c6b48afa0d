import type { Dispatcher } from 'undici';
import { createUsageAccumulator, SseParser, type Protocol, type SseEvent, type Translator } from '../../protocols';
import type { TokenUsage } from '../../domain/pricing';
import type { Ctx } from '../context';
import type { ChatCall, ChatEnv } from './pipeline';
import { toTokenUsage } from './pipeline';
import { settleAfterResponse } from './settle';
import { openAiErrorBody } from '../../domain/error-bodies';

/** The one error chunk of the chat-completions built-in-tool path (spec 1 section 6). */
export const BUILTIN_TOOL_STREAM_ERROR =
  `data: ${JSON.stringify(openAiErrorBody({ message: 'upstream stream failed', type: 'api_error', code: 'upstream_error' }))}\n\ndata: [DONE]\n\n`;

function frame(ev: SseEvent): string {
  return ev.event ? `event: ${ev.event}\ndata: ${ev.data}\n\n` : `data: ${ev.data}\n\n`;
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
    attempts: number;
    clientGone: AbortController;
    deadline: AbortSignal;
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
  // A generate-content JSON array stream (no alt=sse): `[` item `,\r\n` item ... `]`, as Google frames it.
  const frameOf = (ev: SseEvent) => (array ? (items++ === 0 ? '[' : ',\r\n') + ev.data : frame(ev));
  /** Account every event; return what the client gets for them (all frames of one upstream chunk in one write). */
  const framesOf = (events: SseEvent[]): string => {
    let text = '';
    for (const ev of events) {
      acc.push(ev);
      if (enc) text += enc.push(ev).frames.join('');
      else if (!passthrough && !(dropUsageChunk && isUsageOnlyChunk(ev))) text += frameOf(ev);
    }
    return text;
  };

  try {
    for await (const chunk of s.res.body as AsyncIterable<Buffer>) {
      const text = framesOf(parser.push(chunk));
      await write(passthrough ? chunk : text);
      if (s.clientGone.signal.aborted) break;
    }
    if (!s.clientGone.signal.aborted) {
      await write(framesOf(parser.end()));
      if (enc) await write(enc.end().join(''));
    }
  } catch (err) {
    failure = err;
  }

  const clientGone = s.clientGone.signal.aborted || out.destroyed;
  if (clientGone) s.res.body.destroy();
  const completed = acc.completed && !failure && !clientGone;
  if (!completed && !clientGone && call.builtinToolPath) await write(BUILTIN_TOOL_STREAM_ERROR);
  if (completed && array) await write(items === 0 ? '[]' : '\n]');

  if (!out.writableEnded) out.end();

  const usage = billedUsage(call, toTokenUsage(acc.usage), acc.outputChars, completed);
  const reason = clientGone ? 'client_closed' : s.deadline.aborted ? 'upstream_timeout' : failure ? 'upstream_cut' : !completed ? 'upstream_incomplete' : undefined;
  await settleAfterResponse(env, ctx, call.model, usage, {
    status: completed ? 'success' : 'interrupted',
    attempts: s.attempts,
    errorCode: reason,
    errorMessage: reason ? `stream ended early (${reason})` : undefined,
  });
}

/**
 * Actual usage when it arrived; otherwise an estimate from the prompt size and
 * the output characters (also for a stream that ended properly without usage).
 */
function billedUsage(call: ChatCall, usage: TokenUsage | null, outputChars: number, completed: boolean): TokenUsage | null {
  if (completed && usage) return usage;
  // Never bill an empty output (a messages stream reports output_tokens: 1 in message_start already).
  if (outputChars === 0) return null;
  const estimatedOutput = Math.ceil(outputChars / 4);
  if (usage) return { ...usage, outputTokens: Math.max(usage.outputTokens, estimatedOutput) };
  const promptTokens = Math.ceil(Buffer.byteLength(JSON.stringify(call.promptForEstimate ?? '')) / 4);
  return { inputTokens: promptTokens, outputTokens: estimatedOutput, cachedTokens: 0, cacheWriteTokens: 0, serverToolCalls: 0 };
}
