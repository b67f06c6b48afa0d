import { publicStatus, type TaskDocument } from '../../domain/media/task';
import { formatCredits } from '../../domain/money';
import { unix } from './list-query';

/** A speech task as clients see it (docs/media/speech.md); states pending, succeeded, failed. */
export function speechView(doc: TaskDocument) {
  const x = doc.result?.extra ?? {};
  const succeeded = doc.state === 'succeeded' && doc.result !== null;
  const final = doc.state !== 'queued' && doc.state !== 'running';
  return {
    id: doc._id,
    object: 'audio.speech',
    status: publicStatus('speech', doc.state),
    model: doc.model,
    async: doc.input.async === true,
    voice_id: doc.input.voice_id,
    created_at: unix(doc.created_at),
    completed_at: unix(doc.completed_at),
    audio_url: succeeded ? (doc.result!.urls[0] ?? null) : null,
    format: typeof x.format === 'string' ? x.format : doc.input.format ?? 'mp3',
    audio_length_ms: typeof x.audio_length_ms === 'number' ? x.audio_length_ms : null,
    audio_size: typeof x.audio_size === 'number' ? x.audio_size : null,
    expires_at: succeeded && doc.result!.expires_at ? unix(doc.result!.expires_at) : null,
    usage: { characters: succeeded ? doc.unit_count : 0 },
    cost: formatCredits(doc.cost_nano),
    error: final && !succeeded ? { code: doc.error_code ?? 'speech_failed', message: doc.error_message ?? 'speech synthesis failed' } : null,
  };
}
