import { GatewayError } from '../../domain/errors';
import type { TaskDocument } from '../../domain/media/task';

/**
 * The error a synchronous answer gives for a task that did not succeed
 * (speech, voice cloning, transcripts; charged nothing, the reservation is
 * refunded by the workflow). The status follows the upstream's, mapped as
 * spec 1 section 7 maps OpenAI-shaped upstream errors.
 */
export function taskFailure(doc: TaskDocument): GatewayError {
  const status = doc.final_status ?? (doc.state === 'expired' ? 504 : 502);
  const message = failureMessage(doc);
  if (status === 400 || status === 422) return new GatewayError('invalid_request', message, { status, type: 'invalid_request_error' });
  if (status === 403) return new GatewayError('permission_denied', message);
  if (status === 404) return new GatewayError('not_found', message, { status: 404, type: 'invalid_request_error' });
  if (status === 429) return new GatewayError('rate_limit_exceeded', message);
  if (status === 504 || doc.state === 'expired') return new GatewayError('upstream_timeout', message);
  if (doc.error_code === 'upstream_unreachable') return new GatewayError('upstream_unreachable', message, { status: status === 503 ? 503 : 502 });
  return new GatewayError('upstream_error', message, { status: status >= 500 && status < 600 ? status : 502 });
}

/** The clearest text available: the upstream's own message (MiniMax `base_resp`, `{error}`, Suno `message`), else the task's. */
function failureMessage(doc: TaskDocument): string {
  if (doc.final_body) {
    try {
      const b = JSON.parse(doc.final_body) as { base_resp?: { status_msg?: unknown }; error?: { message?: unknown }; message?: unknown };
      const m = b.base_resp?.status_msg ?? b.error?.message ?? b.message;
      if (typeof m === 'string' && m) return `upstream error: ${m}`;
    } catch {
      /* not JSON */
    }
  }
  return doc.error_message ?? `the task ended ${doc.state}`;
}
