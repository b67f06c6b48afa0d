import { publicStatus, type TaskDocument } from '../../domain/media/task';
import { formatCredits } from '../../domain/money';
import { unix } from './list-query';

/** A music generation as clients see it (docs/media/music.md). */
export function musicView(doc: TaskDocument) {
  const inFlight = doc.state === 'queued' || doc.state === 'running';
  const succeeded = doc.state === 'succeeded' && doc.result !== null;
  const songs = succeeded && Array.isArray(doc.result!.extra?.songs) ? (doc.result!.extra!.songs as unknown[]) : [];
  const view: Record<string, unknown> = {
    id: doc._id,
    object: 'music.generation',
    status: publicStatus('music', doc.state),
    model: doc.model,
    created_at: unix(doc.created_at),
    completed_at: unix(doc.completed_at),
    title: doc.input.title ?? null,
    tags: doc.input.tags ?? null,
    make_instrumental: doc.input.make_instrumental === true,
    songs,
    expires_at: succeeded && doc.result!.expires_at ? unix(doc.result!.expires_at) : null,
    usage: { songs: succeeded ? doc.unit_count : 0 },
    cost: formatCredits(doc.cost_nano),
    error: !inFlight && !succeeded ? { code: doc.error_code ?? 'generation_failed', message: doc.error_message ?? 'music generation failed' } : null,
  };
  // Suno reports progress; shown only while processing and only when reported (spec 2 section 2.1).
  if (inFlight && doc.progress !== null) view.progress = doc.progress;
  return view;
}

/** The submit answer: `{id, object, status: processing, model, created_at}`. */
export function musicSubmitted(doc: TaskDocument) {
  return { id: doc._id, object: 'music.generation', status: publicStatus('music', doc.state), model: doc.model, created_at: unix(doc.created_at) };
}
