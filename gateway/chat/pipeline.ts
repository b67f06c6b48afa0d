import { EventEmitter } from 'node:events';
import { upstreamApiKey } from '../../platform/config';
import type { Dispatcher } from 'undici';
import { GatewayError, errors } from '../../domain/errors';
import type { Channel, Model } from '../../domain/catalogue';
import { prechargeEstimate } from '../../domain/pricing';
import { remainingNano } from '../../domain/api-key';
import { CapHolds, capHolds } from './cap-holds';
import { classifyTransportError, discardBody } from '../../platform/upstream';
import { ReadAhead } from '../../platform/read-ahead';
import { chatProviders } from '../../providers';
import type { Protocol } from '../../protocols/types';
import type { ServiceDeps } from '../deps';
import type { Ctx } from '../context';
import { checkModelAccess } from '../model-access';
import { chatUpstreamFailure } from '../upstream-errors';
import { failAfterAnswer, settleChat, settleDurably } from './settle';
import { getTranslator, extractUsage, outputChars, type Translator } from '../../protocols';
import { usageToBill } from '../../domain/usage-estimate';
import { relayStream } from './stream-relay';
import { promptBytes, toTokenUsage, type ChatCall, type StopReason } from './call';

export type { ChatCall, StopReason } from './call';
import { costReport } from '../../domain/cost-report';
import { addCostFields, setCostHeader } from './cost-fields';
import { deadlineIn } from '../deadlines';
import { recordOutcomeAhead } from '../middleware/usage-capture';
import { loggedAttempt, type CallAttempt } from '../../domain/call-attempts';
import { climbLadder, CHAT_LADDER, UpstreamHttpError, UpstreamTransportError } from '../../domain/channel-ladder';

/**
 * Pre-charge gate: an estimate above what the key can spend is 402, with no upstream call. A key with a
 * cap or an escrow of its own also holds its estimate until the call's charge is written, and counts
 * what its other calls in flight hold (./cap-holds.ts); `ctx.state.capRelease` gives the hold back.
 */
export function precharge(deps: ServiceDeps, ctx: Ctx, call: ChatCall): void {
  const { estimate, remaining } = prechargeFit(deps, ctx, call);
  if (estimate > remaining) throw errors.quota();
  const key = ctx.state.auth!.key;
  if (CapHolds.applies(key) && !ctx.state.capRelease) ctx.state.capRelease = capHolds.take(key.id, estimate);
}

/** This call's pre-charge estimate and what the key can spend now (on the auth state the call has, less what its other calls in flight hold). */
function prechargeFit(deps: ServiceDeps, ctx: Ctx, call: ChatCall): { estimate: number; remaining: number } {
  const auth = ctx.state.auth!;
  const estimate = prechargeEstimate(call.model, deps.catalogue().pricingRules, promptBytes(call), call.maxTokens);
  let remaining = remainingNano(auth.balanceNano, auth.key, auth.keySpendNano);
  if (CapHolds.applies(auth.key)) remaining -= capHolds.of(auth.key.id) - (ctx.state.capRelease ? estimate : 0);
  return { estimate, remaining };
}

/**
 * An optimistic call's gate (gateway/middleware/auth.ts): wait for the key's fresh state, which throws
 * the refusal, or admits the call; then what was checked on the guess is checked on the fresh state
 * (the model's access only if the key or account record changed; the pre-charge always).
 */
async function confirmAuth(deps: ServiceDeps, ctx: Ctx, call: ChatCall): Promise<void> {
  const pending = ctx.state.authConfirmed;
  if (!pending) return;
  const { changed } = await pending;
  if (changed) checkModelAccess(ctx, call.model, ctx.state.requestedModel ?? call.model.id);
  precharge(deps, ctx, call);
}

/**
 * The gate before the upstream call. With CHAT_AUTH_OVERLAP=prepare (the default), every optimistic call
 * waits here for its key's fresh state. With `upstream`, one whose guessed balance covers at least twice
 * the estimate goes ahead while the read is under way; one closer to its limit waits here, so a wallet
 * running dry does not send upstream calls that will be refused (the guess already counts what this
 * process took out of the wallet: capabilities/accounts/auth-lookup.ts).
 */
async function gateUpstream(deps: ServiceDeps, ctx: Ctx, call: ChatCall): Promise<boolean> {
  if (!ctx.state.authConfirmed) {
    precharge(deps, ctx, call);
    return false;
  }
  if (deps.config.CHAT_AUTH_OVERLAP === 'upstream') {
    const { estimate, remaining } = prechargeFit(deps, ctx, call);
    if (remaining >= 2 * estimate) return true;
  }
  await confirmAuth(deps, ctx, call);
  return false;
}

interface Prepared {
  channel: Channel;
  translation: Translator<any> | undefined;
  dropped: string[];
  body: Buffer | string;
}

function prepare(env: ServiceDeps, call: ChatCall, channel: Channel): Prepared {
  const upstreamModel = channel.upstream_model ?? call.model.id;
  if (channel.kind === 'translated') {
    const translation = getTranslator(call.client, channel.upstream as Protocol);
    if (!translation) throw new GatewayError('internal_error', `no translator ${call.client} -> ${channel.upstream}`);
    // The upstream gets the current model id, never the alias the client sent.
    const { body, dropped } = translation.request({ ...call.body, ...(call.client === 'generate-content' ? {} : { model: upstreamModel }) } as never, {
      model: upstreamModel,
      defaultMaxTokens: call.maxTokens ?? Math.min(call.model.default_max_tokens ?? 4096, 32768),
      stream: call.stream,
    });
    return { channel, translation, dropped, body: JSON.stringify(body) };
  }
  // Native or upstream-converted: forward the client's bytes, unless the model id must change
  // (an alias) or the stream must report usage for billing.
  const needsUsage = call.stream && call.client === 'chat-completions' && !call.includeUsage;
  if (call.body.model === upstreamModel && !needsUsage) return { channel, translation: undefined, dropped: [], body: call.raw };
  // Object.assign, not a spread: on Node 20 a spread copy that then gains a member costs about 1 us and a
  // map of its own each time (capabilities/accounts/auth-lookup.ts `snapshotOf` has the figures).
  const body: Record<string, unknown> = Object.assign({}, call.body);
  if (call.client !== 'generate-content') body.model = upstreamModel;
  if (needsUsage) body.stream_options = Object.assign({}, body.stream_options as object | undefined, { include_usage: true });
  return { channel, translation: undefined, dropped: [], body: JSON.stringify(body) };
}

function clientHeaders(ctx: Ctx): Record<string, string | undefined> {
  return { 'anthropic-version': ctx.get('anthropic-version') || undefined, 'anthropic-beta': ctx.get('anthropic-beta') || undefined };
}

/** What a channel answered: the response, and its whole body unless it streams (then its chunks, the first already in). */
interface Answer {
  prepared: Prepared;
  res: Dispatcher.ResponseData;
  bytes?: Buffer;
  chunks?: AsyncIterable<Buffer>;
}

/** `rest`'s chunks after `first`, as one iterable (a plain iterator, not a generator: one per stream, on the hot path). */
function startingWith(first: Buffer, rest: AsyncIterator<Buffer>): AsyncIterable<Buffer> {
  let head: Buffer | undefined = first;
  const iterator: AsyncIterator<Buffer> = {
    next: () => {
      if (head === undefined) return rest.next();
      const value = head;
      head = undefined;
      return Promise.resolve({ value, done: false });
    },
    return: (value?: unknown) => (rest.return ? rest.return(value) : Promise.resolve({ value: undefined, done: true as const })),
  };
  return { [Symbol.asyncIterator]: () => iterator };
}

/**
 * What stops a chat request's upstream call: an EventEmitter with `aborted`, which undici takes
 * as a signal as it takes an AbortSignal (its request fails with RequestAbortedError, its body is
 * destroyed). An AbortController costs an EventTarget per request and undici's listener on it
 * (createAbortSignal and addAbortListener were about 5 % of the gateway's profile at 64 clients).
 */
export class StopSignal extends EventEmitter {
  aborted = false;
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

/** Thrown out of the ladder when the client went away: nothing reached it, nothing is billed. */
class ClientGone extends Error {}

/** Thrown out of the ladder when an optimistic call's fresh state refused it: the refusal is the answer. */
class AuthRefused extends Error {}

/**
 * One chat request: climb the channel ladder (domain/channel-ladder.ts:
 * a 5xx or a connection failure moves to the next channel, nothing is
 * retried once the client got a byte), translate when the channel speaks
 * another protocol, relay the answer or the stream, then settle on actual usage.
 */
export async function runChat(env: ServiceDeps, ctx: Ctx, call: ChatCall): Promise<void> {
  if (call.channels.length === 0) throw errors.noChannel(call.model.id, call.client);
  /** The upstream call goes out before the key's fresh state admitted the call (CHAT_AUTH_OVERLAP=upstream). */
  const upstreamBeforeAuth = await gateUpstream(env, ctx, call);

  // One signal stops the upstream request: the client went away, or the deadline (streaming included)
  // passed; `stopped` says which. The deadline is an entry in a shared sweep (./deadlines), not a
  // timer per request, and one signal serves both causes.
  const stop = new StopSignal();
  const signal = stop;
  const stopped: StopReason = { client: false, deadline: false };
  const onClose = () => {
    if (ctx.res.writableFinished || stopped.client) return;
    stopped.client = true;
    stop.abort();
  };
  ctx.req.once('close', onClose);
  ctx.res.once('close', onClose);
  const deadline = deadlineIn(env.config.CHAT_UPSTREAM_TIMEOUT_MS, () => {
    stopped.deadline = true;
    stop.abort();
  });
  // A refusal stops an upstream call sent before the key's fresh state came (it is answered below, by confirmAuth).
  let refused = false;
  if (upstreamBeforeAuth) {
    ctx.state.authConfirmed!.catch(() => {
      refused = true;
      stop.abort();
    });
  }
  /** A thrown transport error: the client left, the deadline passed, or the channel failed (the ladder decides). */
  const transportFailure = (err: unknown): Error => {
    if (refused) return new AuthRefused();
    if (stopped.deadline) return new UpstreamTransportError('timeout', 'the request deadline passed');
    const kind = classifyTransportError(err);
    if (stopped.client || kind === 'aborted') return new ClientGone();
    return new UpstreamTransportError(kind, `upstream connection failed (${(err as Error).message})`);
  };

  let attempts = 0;
  // Channel, status and latency of each attempt, for the usage row and the call log (at most 3).
  const tried: CallAttempt[] = [];
  ctx.state.attempts = tried;
  /** An optimistic call's confirmation; its refusal is answered as if it came first (no attempts, no upstream row). */
  const confirmed = () =>
    confirmAuth(env, ctx, call).catch((err: unknown) => {
      attempts = 0;
      ctx.state.attempts = undefined;
      throw err;
    });
  try {
    let answer: Answer;
    try {
      ({ value: answer } = await climbLadder(call.channels, CHAT_LADDER, loggedAttempt(tried, (c) => c.id, async (channel, n): Promise<Answer> => {
        attempts = n;
        const prepared = prepare(env, call, channel);
        const provider = chatProviders[channel.upstream];
        if (!provider) throw new GatewayError('internal_error', `no provider for upstream ${channel.upstream}`);
        const target = provider.call(channel, {
          model: channel.upstream_model ?? call.model.id,
          stream: call.stream,
          apiKey: upstreamApiKey(env.config, channel),
          clientHeaders: clientHeaders(ctx),
        });
        const res = await env.upstream.request(target.url, { method: 'POST', headers: target.headers, body: prepared.body, signal, channel: channel.id }).catch((err: unknown) => {
          throw transportFailure(err);
        });
        if (res.statusCode >= 300) {
          const text = await res.body.text().catch(() => '');
          throw new UpstreamHttpError(res.statusCode, text, undefined, res.headers);
        }
        if (call.stream) {
          // Nothing reaches the client before the stream's first chunk: a stream that fails or ends before
          // it is a connection failure like any other, and the next channel is tried (not an empty 200).
          const rest = (res.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
          const first = await rest.next().catch((err: unknown) => {
            throw transportFailure(err);
          });
          if (first.done) throw new UpstreamTransportError('other', 'upstream closed the stream before its first byte');
          return { prepared, res, chunks: startingWith(first.value, rest) };
        }
        // Nothing reached the client yet: a body cut short is a connection failure like any other.
        const bytes = await res.body.arrayBuffer().then(Buffer.from, (err: unknown) => {
          throw transportFailure(err);
        });
        return { prepared, res, bytes };
      }, (a) => a.res.statusCode), { breaker: env.channelHealth.ladder }));
    } catch (err) {
      if (upstreamBeforeAuth) await confirmed();
      if (err instanceof ClientGone) return await clientLeft(env, ctx, call, attempts);
      throw chatUpstreamFailure(err, env.config.CHAT_UPSTREAM_TIMEOUT_MS);
    }
    // A stream waiting for the key's fresh state is read meanwhile: what the upstream sent before a
    // failure of its connection is kept (an unread undici body drops it) and relayed as it would have been.
    let ahead: ReadAhead<Buffer> | undefined;
    if (upstreamBeforeAuth) {
      if (answer.chunks) {
        const body = answer.res.body;
        ahead = new ReadAhead(answer.chunks, { release: () => discardBody(body) });
      }
      try {
        await confirmed();
      } catch (err) {
        discardBody(answer.res.body);
        throw err;
      }
    }
    setTranslationHeaders(ctx, call, answer.prepared);
    if (answer.bytes) return await relayJson(env, ctx, call, answer.bytes, answer.prepared, attempts);
    const { prepared, res } = answer;
    await relayStream(env, ctx, call, { res, chunks: ahead?.chunks() ?? answer.chunks, translation: prepared.translation, upstream: prepared.channel.upstream as Protocol, channel: prepared.channel.id, attempts, stopped });
  } catch (err) {
    // One usage row per request, with the attempts it took (failed attempts are not rows). Written ahead
    // (the ledger journal in Redis) before the error goes out, as every refusal's row is: kept in this
    // process's batch, the row of an upstream 429 or 5xx died with a gateway killed right after answering.
    if (err instanceof GatewayError && !ctx.state.usageRecorded && attempts > 0) {
      await recordOutcomeAhead(env, ctx, {
        status: err.status < 500 ? 'rejected' : 'error',
        model: call.model.id,
        attempts_count: attempts,
        error_code: err.code,
        error_message: err.message,
      });
    }
    throw err;
  } finally {
    deadline.clear();
    ctx.req.off('close', onClose);
    ctx.res.off('close', onClose);
    // The charge is written (or there is none): what it held no longer bounds the key's other calls.
    ctx.state.capRelease?.();
  }
}

/** The client went away before any byte of the answer: nothing generated reached it, nothing is billed. */
async function clientLeft(env: ServiceDeps, ctx: Ctx, call: ChatCall, attempts: number): Promise<void> {
  await settleChat(env, ctx, call.model, null, { status: 'interrupted', attempts, errorCode: 'client_closed', errorMessage: 'client disconnected before the upstream answered' });
}

function setTranslationHeaders(ctx: Ctx, call: ChatCall, prepared: Prepared): void {
  if (!prepared.translation) return;
  ctx.set('X-Protocol-Translation', `${call.client}_to_${prepared.channel.upstream}`);
  if (prepared.dropped.length) ctx.set('X-Protocol-Warning', prepared.dropped.join('; '));
}

async function relayJson(env: ServiceDeps, ctx: Ctx, call: ChatCall, bytes: Buffer, prepared: Prepared, attempts: number) {
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new GatewayError('upstream_error', 'upstream answered with a body that is not JSON', { status: 502 });
  }
  const upstream = prepared.channel.upstream as Protocol;
  // Never bill delivered output at 0: usage the upstream left out, zeroed or under-reported is estimated.
  const chars = outputChars(upstream, json);
  const billed = usageToBill({ reported: toTokenUsage(extractUsage(upstream, json)), outputChars: chars, promptBytes: promptBytes(call), completed: true });
  const billing = { estimated: billed.estimated, misreport: billed.misreport, outputChars: chars, channel: prepared.channel.id };
  // The charge is written ahead (one Redis script) before the answer goes out: a gateway that dies
  // after answering has already made it durable. The charge's price is known once the script is sent
  // (settleChat sets it before its first wait), so the answer is built while Redis runs the script,
  // and handed to the socket only when the script has answered.
  const settled = settleDurably(env, ctx, call.model, billed.usage, { status: 'success', attempts, billing });
  // The answer says what it cost: the charge being settled, in the header and beside the body's usage.
  const report = costReport(ctx.state.charge);
  const answer = (prepared.translation ? prepared.translation.response(json, { model: call.model.id }) : json) as Record<string, any>;
  addCostFields(call.client, answer, report);
  const text = JSON.stringify(answer);
  await settled;
  setCostHeader(ctx, report);
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = text;
  failAfterAnswer(ctx);
}

