import type { Dispatcher } from 'undici';
import { createUsageAccumulator, SseParser, type Protocol, type SseEvent, type Translator } from '../../protocols';
import type { TokenUsage } from '../../domain/pricing';
import type { Ctx } from '../context';
import type { ChatCall, ChatEnv } from './pipeline';
import { toTokenUsage } from './pipeline';
import { settleChat } from './settle';

/** The one error chunk of the chat-completions built-in-tool path (spec 1 section 6). */
export const BUILTIN_TOOL_STREAM_ERROR =
  `data: ${JSON.stringify({ error: { message: 'upstream stream failed', type: 'api_error', code: 'upstream_error' } })}\n\ndata: [DONE]\n\n`;

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
  const out = ctx.res;
  out.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const parser = new SseParser();
  const acc = createUsageAccumulator(s.upstream);
  const enc = s.translation?.stream({ model: call.model.id, includeUsage: call.includeUsage });
  const dropUsageChunk = !enc && call.client === 'chat-completions' && !call.includeUsage;
  let failure: unknown;

  const write = async (text: string) => {
    if (!text || out.destroyed) return;
    if (!out.write(text)) await new Promise<void>((resolve) => {
      const done = () => {
        out.off('drain', done);
        out.off('close', done);
        resolve();
      };
      out.once('drain', done);
      out.once('close', done);
    });
  };

  try {
    for await (const chunk of s.res.body) {
      for (const ev of parser.push(chunk as Buffer)) {
        acc.push(ev);
        if (enc) await write(enc.push(ev).frames.join(''));
        else if (!(dropUsageChunk && isUsageOnlyChunk(ev))) await write(frame(ev));
      }
      if (s.clientGone.signal.aborted) break;
    }
    if (enc && !s.clientGone.signal.aborted) await write(enc.end().join(''));
  } catch (err) {
    failure = err;
  }

  const clientGone = s.clientGone.signal.aborted || out.destroyed;
  if (clientGone) s.res.body.destroy();
  const completed = acc.completed && !failure && !clientGone;
  if (!completed && !clientGone && call.builtinToolPath) await write(BUILTIN_TOOL_STREAM_ERROR);
  if (!out.writableEnded) out.end();

  const usage = billedUsage(call, toTokenUsage(acc.usage), acc.outputChars, completed);
  const reason = clientGone ? 'client_closed' : s.deadline.aborted ? 'upstream_timeout' : failure ? 'upstream_cut' : !completed ? 'upstream_incomplete' : undefined;
  await settleChat(env, ctx, call.model, usage, {
    status: completed ? 'success' : 'interrupted',
    attempts: s.attempts,
    errorCode: reason,
    errorMessage: reason ? `stream ended early (${reason})` : undefined,
  });
}

/** Actual usage when it arrived; otherwise an estimate from the prompt size and the output characters. */
function billedUsage(call: ChatCall, usage: TokenUsage | null, outputChars: number, completed: boolean): TokenUsage | null {
  if (completed) return usage;
  if (outputChars === 0 && (!usage || usage.outputTokens === 0)) return null; // never bill an empty output
  const estimatedOutput = Math.ceil(outputChars / 4);
  if (usage) return { ...usage, outputTokens: Math.max(usage.outputTokens, estimatedOutput) };
  const promptTokens = Math.ceil(Buffer.byteLength(JSON.stringify(call.promptForEstimate ?? '')) / 4);
  return { inputTokens: promptTokens, outputTokens: estimatedOutput, cachedTokens: 0, cacheWriteTokens: 0, serverToolCalls: 0 };
}
