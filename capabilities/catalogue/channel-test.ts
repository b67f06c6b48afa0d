import { GatewayError, errors } from '../../domain/errors';
import { isChatAdapter, resolveChannels, type ChannelRecord, type ResolvedChannel } from '../../domain/channels';
import { substituteUrl, type Catalogue } from '../../domain/catalogue';
import { UpstreamHttpError, UpstreamTransportError } from '../../domain/channel-ladder';
import { classifyTransportError, type UpstreamPools } from '../../platform/upstream';
import { upstreamApiKey, type Config } from '../../platform/config';
import { chatProviders } from '../../providers';
import { mediaProviders, type MediaHttp } from '../../providers/media';
import { channelCredentials, type CatalogueEnv } from './records';
import type { ChannelHealth } from './channel-health';

/** A test call gives up after this long. */
const TEST_TIMEOUT_MS = 20_000;
const PROMPT = 'Reply with the single word OK.';
const MAX_TOKENS = 16;

export interface ChannelTestResult {
  object: 'channel_test';
  channel: string;
  ok: boolean;
  model: string;
  upstream_model: string;
  adapter: string;
  protocol: string;
  /** The upstream's HTTP status, or null when it could not be reached. */
  status: number | null;
  latency_ms: number;
  /** The answer's text (chat), or the start of the upstream's body. */
  snippet: string;
  error: string | null;
}

/** The smallest request of each chat wire format. */
const CHAT_BODY: Record<string, (model: string) => Record<string, unknown>> = {
  'chat-completions': (model) => ({ model, messages: [{ role: 'user', content: PROMPT }], max_tokens: MAX_TOKENS }),
  messages: (model) => ({ model, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: PROMPT }] }),
  responses: (model) => ({ model, input: PROMPT, max_output_tokens: MAX_TOKENS }),
  'generate-content': () => ({ contents: [{ role: 'user', parts: [{ text: PROMPT }] }], generationConfig: { maxOutputTokens: MAX_TOKENS } }),
};

/** The answer's text in each wire format (the first text part). */
function answerText(adapter: string, body: any): string | undefined {
  if (adapter === 'chat-completions') return body?.choices?.[0]?.message?.content ?? undefined;
  if (adapter === 'messages') return body?.content?.find?.((b: any) => b?.type === 'text')?.text;
  if (adapter === 'responses') return body?.output_text ?? body?.output?.flatMap?.((o: any) => o?.content ?? []).find((c: any) => typeof c?.text === 'string')?.text;
  if (adapter === 'generate-content') return body?.candidates?.[0]?.content?.parts?.find?.((p: any) => typeof p?.text === 'string')?.text;
  return undefined;
}

/**
 * "Test this channel": one small real request through the channel's adapter,
 * whether the channel is enabled or not. Chat adapters get a 16-token
 * completion; media adapters, whose every generation is billed by the vendor,
 * get a status lookup of a task id that does not exist (an answer of 404
 * means the endpoint and the key reached the vendor). Nothing is charged to
 * any account. The verdict counts in this process's breaker of the channel.
 */
export class ChannelTester {
  constructor(private readonly deps: {
    config: Pick<Config, 'UPSTREAM_KEYS'>; upstream: UpstreamPools; mediaHttp: MediaHttp; health: ChannelHealth;
    catalogue: () => Catalogue; env: CatalogueEnv;
  }) {}

  async test(record: ChannelRecord, modelId?: string): Promise<ChannelTestResult> {
    const entry = modelId === undefined
      ? record.models[0]
      : record.models.find((m) => m.model === (this.deps.catalogue().resolve(modelId)?.id ?? modelId));
    if (!entry) {
      throw modelId === undefined
        ? errors.invalidRequest(`channel '${record.id}' serves no model to test with`, 'model')
        : errors.invalidRequest(`channel '${record.id}' does not serve '${modelId}'`, 'model');
    }
    const ladders = resolveChannels(
      [{ ...record, enabled: true, models: [entry] }],
      (id) => id,
      (c) => channelCredentials(c, this.deps.env),
      (url) => substituteUrl(url, this.deps.env.vars),
    );
    const byProtocol = ladders.get(entry.model) ?? {};
    const [protocol, [channel]] = Object.entries(byProtocol)[0] ?? [undefined, []];
    if (!protocol || !channel) throw errors.invalidRequest(`channel '${record.id}' serves '${entry.model}' on no protocol`, 'model');
    const base = { object: 'channel_test' as const, channel: record.id, model: entry.model, upstream_model: channel.upstream_model ?? entry.model, adapter: channel.upstream, protocol };
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const { status, snippet } = isChatAdapter(channel.upstream) ? await this.chat(channel, base.upstream_model) : await this.media(channel, entry.model, base.upstream_model);
      const ok = status < 300;
      this.deps.health.record(record.id, ok ? 'ok' : status >= 500 ? 'failed' : 'ok');
      return { ...base, ok, status, latency_ms: elapsed(), snippet, error: null };
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      const latency_ms = elapsed();
      if (err instanceof UpstreamHttpError) {
        this.deps.health.record(record.id, err.status >= 500 ? 'failed' : 'ok', err.message);
        // A media status lookup of an unknown task: 404 says the vendor was reached.
        const reached = !isChatAdapter(channel.upstream) && err.status === 404;
        return { ...base, ok: reached, status: err.status, latency_ms, snippet: err.body.slice(0, 500), error: reached ? null : `upstream answered HTTP ${err.status}` };
      }
      const message = err instanceof UpstreamTransportError ? err.message : `upstream call failed: ${(err as Error).message}`;
      this.deps.health.record(record.id, 'failed', message);
      return { ...base, ok: false, status: null, latency_ms, snippet: '', error: message };
    }
  }

  private async chat(channel: ResolvedChannel, upstreamModel: string): Promise<{ status: number; snippet: string }> {
    const provider = chatProviders[channel.upstream];
    const target = provider.call(channel, { model: upstreamModel, stream: false, apiKey: upstreamApiKey(this.deps.config, channel), clientHeaders: {} });
    let res;
    try {
      res = await this.deps.upstream.request(target.url, {
        method: 'POST', headers: target.headers, body: JSON.stringify(CHAT_BODY[channel.upstream](upstreamModel)), signal: AbortSignal.timeout(TEST_TIMEOUT_MS),
      });
    } catch (err) {
      const kind = classifyTransportError(err);
      throw new UpstreamTransportError(kind === 'aborted' ? 'timeout' : kind, `upstream connection failed (${(err as Error).message})`);
    }
    const text = await res.body.text().catch(() => '');
    if (res.statusCode >= 300) throw new UpstreamHttpError(res.statusCode, text, undefined);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { status: 502, snippet: text.slice(0, 500) };
    }
    const answer = answerText(channel.upstream, json);
    return { status: res.statusCode, snippet: (typeof answer === 'string' ? answer : text).slice(0, 500) };
  }

  private async media(channel: ResolvedChannel, model: string, upstreamModel: string): Promise<{ status: number; snippet: string }> {
    const provider = mediaProviders[channel.upstream];
    if (!provider?.poll) {
      throw errors.invalidRequest(`the ${channel.upstream} adapter has no free request to test with (every call generates, and is billed by the vendor)`);
    }
    const task = { _id: 'channel-test', model, input: {}, kind: 'image', endpoint: 'channel-test' } as never;
    const r = await provider.poll({ channel, task, http: this.deps.mediaHttp, apiKey: upstreamApiKey(this.deps.config, channel), upstreamModel }, 'gateway-channel-test-0');
    return { status: 200, snippet: JSON.stringify(r).slice(0, 500) };
  }
}
