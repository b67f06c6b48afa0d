import type { MediaModels } from './store';
import type { TaskDocument } from '../../domain/media/task';
import { bodyText } from '../../providers/media/images-files';
import { mediaErrorJson } from '../../domain/error-bodies';

/** The task's final answer as the client sees it (a large body stored aside is loaded). */
export async function finalBody(deps: { db: MediaModels }, doc: TaskDocument): Promise<string> {
  if (doc.final_body === null) {
    return mediaErrorJson(doc.error_code ?? 'upstream_error', doc.error_message ?? 'the task ended without a result', 'api_error');
  }
  return bodyText(deps.db.TaskFile, doc.final_body);
}
