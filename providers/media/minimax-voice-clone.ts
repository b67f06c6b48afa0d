import type { MediaProvider } from './types';
import { baseRespFailure, minimaxModel, ownLinkExpiry } from './minimax-common';
import { z } from 'zod';
import { parseUpstream } from './ark-schemas';

/**
 * MiniMax voice cloning, synchronous: POST {base}/v1/voice_clone
 * {audio_url, voice_id, text?, model?, need_noise_reduction?, need_volume_normalization?}.
 * The voice_id registered upstream is the gateway's task id: unique across
 * the accounts sharing the vendor account, and valid by MiniMax's rule
 * (8-256 characters, starts with a letter).
 */
const CLONE_TIMEOUT_MS = 120_000;

const Cloned = z.looseObject({ demo_audio: z.string().nullish(), input_sensitive: z.boolean().nullish() });

export const minimaxVoiceClone: MediaProvider = {
  name: 'minimax-voice-clone',
  async submit({ channel, task, http, apiKey }) {
    const i = task.input;
    const body: Record<string, unknown> = { voice_id: task._id, audio_url: i.audio_url };
    if (typeof i.text === 'string' && typeof i.preview_model === 'string') {
      body.text = i.text;
      body.model = minimaxModel(i.preview_model);
    }
    if (i.need_noise_reduction !== undefined) body.need_noise_reduction = i.need_noise_reduction;
    if (i.need_volume_normalization !== undefined) body.need_volume_normalization = i.need_volume_normalization;
    const r = await http.json('POST', `${channel.base_url}/v1/voice_clone`, { headers: { authorization: `Bearer ${apiKey}` }, body, timeoutMs: CLONE_TIMEOUT_MS });
    const failure = baseRespFailure(r.json, 'voice clone');
    if (failure) return { kind: 'done', outcome: failure };
    const demo = parseUpstream(Cloned, r.json, 'voice clone').demo_audio || null;
    return {
      kind: 'done',
      outcome: { state: 'succeeded', units: 1, urls: demo ? [demo] : [], expiresAt: demo ? ownLinkExpiry([demo]) : null, extra: { upstream_voice_id: task._id, demo_audio: demo } },
    };
  },
};
