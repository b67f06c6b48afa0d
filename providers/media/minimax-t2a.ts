import { z } from 'zod';
import type { MediaProvider, PollResult, ProviderCall, ProviderOutcome } from './types';
import { parseUpstream } from './ark-schemas';
import { PIN_CHANNEL_KEY } from './dh-video';
import { UpstreamHttpError } from './http';
import { baseRespFailure, minimaxModel, ownLinkExpiry } from './minimax-common';

/**
 * MiniMax T2A. Sync: POST {base}/v1/t2a_v2 with `output_format: url`.
 * Async: POST {base}/v1/t2a_async_v2 -> {task_id, file_id, usage_characters};
 * GET /v1/query/t2a_async_query_v2?task_id= until Success, then
 * GET /v1/files/retrieve?file_id= for the download link. Charged per
 * character MiniMax reports (`usage_characters`).
 */
const SYNC_TIMEOUT_MS = 120_000;
const ASYNC_SUBMIT_TIMEOUT_MS = 60_000;
const POLL_TIMEOUT_MS = 15_000;

const SyncResponse = z.looseObject({
  data: z.looseObject({ audio: z.string().min(1), status: z.number().optional() }),
  extra_info: z.looseObject({
    audio_length: z.number().nonnegative(),
    audio_sample_rate: z.number().optional(),
    audio_size: z.number().optional(),
    bitrate: z.number().optional(),
    usage_characters: z.number().int().nonnegative(),
    audio_format: z.string().optional(),
    audio_channel: z.number().optional(),
  }),
  trace_id: z.string().optional(),
});
const AsyncSubmitted = z.looseObject({ task_id: z.union([z.number(), z.string()]), file_id: z.union([z.number(), z.string()]).optional(), usage_characters: z.number().int().nonnegative() });
const AsyncQuery = z.looseObject({ status: z.enum(['Processing', 'Success', 'Failed', 'Expired']), file_id: z.union([z.number(), z.string()]) });
const Retrieved = z.looseObject({ file: z.looseObject({ file_id: z.union([z.number(), z.string()]), bytes: z.number().optional(), download_url: z.string().min(1) }) });

/** The MiniMax T2A body for a validated gateway speech request (capabilities/media/speech-request.ts). */
function t2aBody(call: ProviderCall): Record<string, unknown> {
  const i = call.task.input;
  const voice: Record<string, unknown> = { voice_id: i.voice_id, speed: i.speed ?? 1, vol: i.vol ?? 1, pitch: i.pitch ?? 0 };
  if (i.emotion !== undefined) voice.emotion = i.emotion;
  const audio: Record<string, unknown> = { format: i.format ?? 'mp3', sample_rate: i.sample_rate ?? 32000, bitrate: i.bitrate ?? 128000, channel: i.channel ?? 1 };
  return {
    model: minimaxModel(call.upstreamModel), text: i.text, voice_setting: voice, audio_setting: audio,
    ...(i.language_boost !== undefined ? { language_boost: i.language_boost } : {}),
  };
}

const auth = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });

function succeeded(url: string, characters: number, extra: Record<string, unknown>): ProviderOutcome {
  return { state: 'succeeded', units: characters, urls: [url], expiresAt: ownLinkExpiry([url]), extra: { audio_url: url, characters, ...extra } };
}

/** `{task_id}:{usage_characters}`: the poll needs what the submission reported. */
const encodeId = (taskId: string | number, chars: number) => `${taskId}:${chars}`;
function decodeId(id: string): { taskId: string; chars: number } {
  const at = id.lastIndexOf(':');
  return { taskId: id.slice(0, at), chars: Number(id.slice(at + 1)) };
}

export const minimaxT2a: MediaProvider = {
  name: 'minimax-t2a',
  async submit(call) {
    const { channel, task, http, apiKey } = call;
    const pinned = task.input[PIN_CHANNEL_KEY];
    // A cloned voice belongs to the vendor account of the channel it was cloned on: other channels are skipped as unavailable.
    if (typeof pinned === 'string' && pinned !== channel.id) throw new UpstreamHttpError(503, `the voice lives on channel ${pinned}, not ${channel.id}`, undefined);
    const body = t2aBody(call);
    if (task.input.async === true) {
      const r = await http.json('POST', `${channel.base_url}/v1/t2a_async_v2`, { headers: auth(apiKey), body, timeoutMs: ASYNC_SUBMIT_TIMEOUT_MS });
      const failure = baseRespFailure(r.json, 't2a async');
      if (failure) return { kind: 'done', outcome: failure };
      const s = parseUpstream(AsyncSubmitted, r.json, 't2a async');
      return { kind: 'task', upstreamTaskId: encodeId(s.task_id, s.usage_characters) };
    }
    const r = await http.json('POST', `${channel.base_url}/v1/t2a_v2`, { headers: auth(apiKey), body: { ...body, stream: false, output_format: 'url' }, timeoutMs: SYNC_TIMEOUT_MS });
    const failure = baseRespFailure(r.json, 't2a');
    if (failure) return { kind: 'done', outcome: failure };
    const s = parseUpstream(SyncResponse, r.json, 't2a');
    const x = s.extra_info;
    return {
      kind: 'done',
      outcome: succeeded(s.data.audio, x.usage_characters, {
        audio_length_ms: x.audio_length, format: x.audio_format ?? task.input.format ?? 'mp3', sample_rate: x.audio_sample_rate ?? null,
        bitrate: x.bitrate ?? null, channel: x.audio_channel ?? null, audio_size: x.audio_size ?? null,
      }),
    };
  },
  async poll({ channel, task, http, apiKey }, id): Promise<PollResult> {
    const { taskId, chars } = decodeId(id);
    const q = await http.json('GET', `${channel.base_url}/v1/query/t2a_async_query_v2?task_id=${encodeURIComponent(taskId)}`, { headers: auth(apiKey), timeoutMs: POLL_TIMEOUT_MS });
    const failure = baseRespFailure(q.json, 't2a query');
    if (failure) return { state: 'failed', outcome: failure };
    const t = parseUpstream(AsyncQuery, q.json, 't2a query');
    if (t.status === 'Processing') return { state: 'running' };
    if (t.status !== 'Success') {
      const state = t.status === 'Expired' ? 'expired' : 'failed';
      return { state, outcome: { state, units: 0, urls: [], expiresAt: null, errorCode: state === 'expired' ? 'task_expired' : 'generation_failed', errorMessage: `speech task ${t.status.toLowerCase()}` } };
    }
    const f = await http.json('GET', `${channel.base_url}/v1/files/retrieve?file_id=${encodeURIComponent(String(t.file_id))}`, { headers: auth(apiKey), timeoutMs: POLL_TIMEOUT_MS });
    const fileFailure = baseRespFailure(f.json, 'file retrieve');
    // The task says Success but the file is not there yet: poll again.
    if (fileFailure) return { state: 'running' };
    const file = parseUpstream(Retrieved, f.json, 'file retrieve').file;
    return {
      state: 'succeeded',
      outcome: succeeded(file.download_url, chars, { format: task.input.format ?? 'mp3', audio_size: file.bytes ?? null, file_id: String(file.file_id) }),
    };
  },
};
