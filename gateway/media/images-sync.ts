import type { TaskDocument } from '../../domain/media/task';
import type { MediaTasks } from '../../capabilities/media/media-tasks';
import type { ServiceDeps } from '../deps';
import type { Ctx } from '../context';
import { mediaErrorJson } from '../../domain/error-bodies';
import { finalBody } from '../../capabilities/media/final-body';
import { setTaskCostHeaders } from './cost-headers';
export { finalBody };

/** Once headers are out, a space every so often keeps proxies and clients from timing the call out. */
export const KEEPALIVE_BEAT_MS = 10_000;

const readError = (taskId: string) =>
  mediaErrorJson('internal_error', `the result could not be read; poll GET /v1/images/generations/${taskId}`, 'server_error');

/**
 * The sync 90-second rule (spec 2 sections 4.2 and 7.3): a sync image call
 * waits on the task's workflow. If it has not settled after
 * IMAGE_SYNC_KEEPALIVE_MS (90 s), the gateway sends the headers (200) and
 * keep-alive whitespace; a failure after that point is a 200 with the error
 * body instead of a real status.
 */
export async function answerSync(deps: ServiceDeps, tasks: MediaTasks, ctx: Ctx, doc: TaskDocument): Promise<void> {
  const settled = tasks.waitSettled(doc._id);
  settled.catch(() => undefined); // observed below; never an unhandled rejection
  let timer: NodeJS.Timeout | undefined;
  const early = await Promise.race([settled, new Promise<null>((r) => (timer = setTimeout(() => r(null), deps.config.IMAGE_SYNC_KEEPALIVE_MS)))]);
  clearTimeout(timer);
  if (early) {
    // Ended before the keep-alive: the answer says what the task was charged (0 after a refund).
    setTaskCostHeaders(ctx, early);
    ctx.status = early.final_status ?? 502;
    ctx.type = 'application/json';
    ctx.body = await finalBody(deps, early);
    return;
  }
  ctx.respond = false;
  const res = ctx.res;
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write(' ');
  const beat = setInterval(() => res.write(' '), KEEPALIVE_BEAT_MS);
  let body: string;
  let ok = false;
  try {
    const final = await settled;
    body = await finalBody(deps, final);
    ok = final.state === 'succeeded' && (final.final_status ?? 200) < 300;
  } catch (err) {
    deps.log.error('sync image answer failed after the keep-alive started', { task: doc._id, err });
    body = readError(doc._id);
  } finally {
    clearInterval(beat);
  }
  res.end(body);
  await ctx.state.idempotency?.complete(ok ? 200 : 502, body, 'application/json');
}
