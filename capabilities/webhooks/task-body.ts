import type { MediaModels } from '../media/store';
import type { TaskDocument } from '../../domain/media/task';
import { finalBody } from '../media/final-body';
import { videoView } from '../media/video-view';
import { musicView } from '../media/music-view';
import { speechView } from '../media/speech-view';
import { avatarView } from '../media/avatar-store';

/**
 * What a poll of this final task answers (status and body text), rendered by
 * the very functions the poll routes use, so a webhook carries the same body
 * a `GET` returns: images pass their final status and body through
 * byte-identically; the other families answer 200 with their task view.
 */
export async function taskPollAnswer(db: MediaModels, doc: TaskDocument): Promise<{ status: number; body: string }> {
  switch (doc.endpoint) {
    case 'generations':
    case 'edits':
      return { status: doc.final_status ?? 502, body: await finalBody({ db }, doc) };
    case 'videos':
      return { status: 200, body: JSON.stringify(videoView(doc)) };
    case 'music':
      return { status: 200, body: JSON.stringify(musicView(doc)) };
    case 'speech':
      return { status: 200, body: JSON.stringify(speechView(doc)) };
    case 'avatars':
      return { status: 200, body: JSON.stringify(avatarView(doc)) };
    default:
      throw new Error(`no poll view for tasks of endpoint ${doc.endpoint}`);
  }
}

/** The event type of a final task: `task.succeeded`, `task.failed`, `task.expired` or `task.cancelled`. */
export function eventTypeOf(doc: TaskDocument): string {
  return `task.${doc.state}`;
}
