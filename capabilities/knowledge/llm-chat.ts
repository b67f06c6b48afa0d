import { GatewayError } from '../../domain/errors';
import type { Catalogue } from '../../domain/catalogue';
import { MAX_CHANNEL_ATTEMPTS } from '../../domain/catalogue';
import type { UpstreamPools } from '../../platform/upstream';
import { upstreamApiKey, type Config } from '../../platform/config';
import { chatProviders } from '../../providers';
import { getTranslator, type Protocol } from '../../protocols';
import { chatUsage } from '../../protocols/usage/chat-completions';
import { pageFieldsPrompt, RECORD_PAGE_TOOL, type AskModel } from './compiler/llm';
import type { CompileBilling } from './compile-billing';

/**
 * The LLM compiler's model call, sent the way a client's chat request is:
 * the model's chat-completions channels from the catalogue, in order, at
 * most three (a 5xx or a connection failure moves to the next), translated
 * when a channel speaks another protocol, through the same upstream pools.
 * The answer is a forced `record_page` function call (or JSON text). With
 * `billing`, each call passes the account's pre-charge gate first and every
 * answered call is charged to the account with its usage row
 * (capabilities/knowledge/compile-billing.ts).
 */
export interface LlmChatDeps {
  catalogue: () => Catalogue;
  upstream: UpstreamPools;
  /** The channel's key comes from the one resolver (platform/config.ts upstreamApiKey), as a chat call's does. */
  config: Pick<Config, 'UPSTREAM_KEYS'>;
}

/** One model call may take this long (a compile calls once per page). */
const CALL_TIMEOUT_MS = 60_000;

export function askModelVia(deps: LlmChatDeps, modelId: string, billing?: CompileBilling): AskModel {
  return async (req) => {
    const model = deps.catalogue().resolve(modelId);
    if (!model) throw new GatewayError('model_not_found', `the compiler model '${modelId}' is not in the catalogue`);
    const channels = deps.catalogue().channels(model, 'chat-completions').slice(0, MAX_CHANNEL_ATTEMPTS);
    if (channels.length === 0) throw new GatewayError('no_channel_available', `the compiler model '${modelId}' has no chat channel`);
    const prompt = pageFieldsPrompt(req);
    const request = {
      model: model.id,
      messages: [
        { role: 'system', content: prompt.system },
        { role: 'user', content: prompt.user },
      ],
      tools: [RECORD_PAGE_TOOL],
      tool_choice: { type: 'function', function: { name: 'record_page' } },
      max_tokens: 800,
      temperature: 0,
    };
    const promptBytes = Buffer.byteLength(JSON.stringify(request.messages)) + Buffer.byteLength(JSON.stringify(request.tools));
    await billing?.gate(model, promptBytes, request.max_tokens);
    let last: Error | undefined;
    for (const channel of channels) {
      const upstreamModel = channel.upstream_model ?? model.id;
      const translation = channel.kind === 'translated' ? getTranslator('chat-completions', channel.upstream as Protocol) : undefined;
      if (channel.kind === 'translated' && !translation) continue;
      const body = translation
        ? translation.request({ ...request, model: upstreamModel } as never, { model: upstreamModel, stream: false, defaultMaxTokens: 800 }).body
        : { ...request, model: upstreamModel };
      const provider = chatProviders[channel.upstream];
      if (!provider) continue;
      const target = provider.call(channel, {
        model: upstreamModel, stream: false, apiKey: upstreamApiKey(deps.config, channel), clientHeaders: {},
      });
      const started = performance.now();
      try {
        const res = await deps.upstream.request(target.url, {
          method: 'POST', headers: target.headers, body: JSON.stringify(body), signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
        });
        const text = await res.body.text();
        if (res.statusCode >= 500) {
          last = new Error(`channel ${channel.id ?? channel.base_url} answered ${res.statusCode}`);
          continue;
        }
        if (res.statusCode >= 300) throw new Error(`the model refused the request (${res.statusCode}): ${text.slice(0, 200)}`);
        const json = JSON.parse(text) as unknown;
        const chat = (translation ? translation.response(json, { model: model.id }) : json) as ChatAnswer;
        // Answered: the call is billed whether or not its fields turn out usable.
        await billing?.charge({
          pageId: req.pageId, model, reported: chatUsage(chat.usage) ?? null, promptBytes, outputChars: outputCharsOf(chat),
          latencyMs: performance.now() - started,
        });
        return fieldsOf(chat);
      } catch (err) {
        if ((err as Error).message.startsWith('the model refused')) throw err;
        last = err as Error;
      }
    }
    throw new Error(`no channel of '${model.id}' answered: ${last?.message ?? 'unknown error'}`);
  };
}

interface ChatAnswer {
  usage?: unknown;
  choices?: Array<{ message?: { content?: string | null; tool_calls?: Array<{ function?: { name?: string; arguments?: string } }> } }>;
}

function outputCharsOf(chat: ChatAnswer): number {
  const msg = chat.choices?.[0]?.message;
  return (msg?.content ?? '').length + (msg?.tool_calls ?? []).reduce((n, c) => n + (c.function?.name ?? '').length + (c.function?.arguments ?? '').length, 0);
}

function fieldsOf(chat: ChatAnswer): unknown {
  const msg = chat.choices?.[0]?.message;
  const call = msg?.tool_calls?.find((c) => c.function?.name === 'record_page') ?? msg?.tool_calls?.[0];
  if (call?.function?.arguments) return JSON.parse(call.function.arguments);
  const content = msg?.content ?? '';
  const m = /\{[\s\S]*\}/.exec(content);
  if (!m) throw new Error('the answer held neither a record_page call nor JSON');
  return JSON.parse(m[0]);
}
