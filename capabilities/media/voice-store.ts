import { errors } from '../../domain/errors';
import { publicStatus, type TaskDocument } from '../../domain/media/task';
import type { MediaModels } from './store';
import { isPresetVoice } from './voice-presets';

/**
 * Cloned voices are `voice` tasks in the `voices` collection. The voice id
 * is the task id, which is also the voice_id the gateway registers upstream:
 * unique across accounts, so no account can speak with another's voice.
 */
export const VOICE_ENDPOINT = 'voices';

/** The public voice record. */
export function voiceView(doc: TaskDocument) {
  const extra = doc.result?.extra ?? {};
  const failed = doc.state !== 'queued' && doc.state !== 'running' && doc.state !== 'succeeded';
  return {
    voice_id: doc._id,
    object: 'voice',
    name: typeof doc.input.name === 'string' ? doc.input.name : null,
    model: doc.model,
    status: publicStatus('voice', doc.state),
    demo_audio: typeof extra.demo_audio === 'string' && extra.demo_audio !== '' ? extra.demo_audio : null,
    error: failed ? { code: doc.error_code ?? 'voice_clone_failed', message: doc.error_message ?? 'voice cloning failed' } : null,
    created_at: Math.floor(doc.created_at.getTime() / 1000),
  };
}

/** The account's cloned voices (every status), newest first. */
export async function listVoices(db: MediaModels, accountId: string, limit = 100): Promise<TaskDocument[]> {
  return db.Task.find({ account_id: accountId, endpoint: VOICE_ENDPOINT }).sort({ created_at: -1, _id: -1 }).limit(limit).lean<TaskDocument[]>();
}

export interface UsableVoice {
  voiceId: string;
  preset: boolean;
  /** The channel holding a cloned voice (a vendor's cloned voices belong to that account); null for presets. */
  channel: string | null;
}

/**
 * Resolve a `voice_id` (speech) or `voice` (dh-avatar video): a platform
 * preset, or a voice this account cloned that succeeded. Anything else is
 * 400 invalid_request naming `param`.
 */
export async function usableVoice(db: MediaModels, accountId: string, id: unknown, param = 'voice_id'): Promise<UsableVoice> {
  if (typeof id !== 'string' || id === '') throw errors.invalidRequest(`${param} is required: a preset voice id or a cloned voice id`, param);
  if (isPresetVoice(id)) return { voiceId: id, preset: true, channel: null };
  const doc = await db.Task.findOne({ _id: id, account_id: accountId, endpoint: VOICE_ENDPOINT }).lean<TaskDocument>();
  if (!doc) throw errors.invalidRequest(`voice ${id} is neither a preset voice nor a voice cloned by this account (GET /v1/audio/voices lists both)`, param);
  if (doc.state !== 'succeeded') throw errors.invalidRequest(`voice ${id} is not ready (status ${publicStatus('voice', doc.state)})`, param);
  return { voiceId: id, preset: false, channel: doc.upstream?.channel ?? null };
}
