import type http from 'node:http';
import { addFaultSchema } from './faults';
import { readBody, sendJson } from './http';
import { phaseOf } from './tasks';
import type { MediaState, SimTask } from './state';

/** `/_control/media/*`: fault injection and inspection for tests. */

function taskView(state: MediaState, t: SimTask): Record<string, unknown> {
  return {
    id: t.id,
    api: t.api,
    channel: t.channel,
    method: t.method,
    path: t.path,
    model: t.model,
    async: t.async,
    body: t.body,
    headers: t.headers,
    submitted_at: t.submittedAt,
    due_at: t.dueAt,
    status: t.async ? phaseOf(t, state.now()).state : 'completed',
    polls: t.polls,
    faults: t.faults,
  };
}

export async function handleControl(state: MediaState, sub: string, url: URL, req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean> {
  const method = req.method ?? 'GET';
  const channel = url.searchParams.get('channel');
  if (sub === '/faults' && method === 'POST') {
    const body = await readBody(req);
    const parsed = addFaultSchema.safeParse(body.kind === 'json' ? body.value : undefined);
    if (!parsed.success) {
      sendJson(res, 400, { error: 'invalid fault', issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) });
      return true;
    }
    state.faults.add(parsed.data);
    sendJson(res, 200, { ok: true, channel: parsed.data.channel, faults: state.faults.list(parsed.data.channel) });
    return true;
  }
  if (sub === '/faults' && method === 'DELETE') {
    state.faults.clear(channel ?? undefined);
    sendJson(res, 200, { ok: true });
    return true;
  }
  if (sub === '/faults' && method === 'GET') {
    sendJson(res, 200, { channel, faults: channel === null ? [] : state.faults.list(channel) });
    return true;
  }
  if (sub === '/tasks' && method === 'GET') {
    const tasks = [...state.tasks.values()].filter((t) => channel === null || t.channel === channel).map((t) => taskView(state, t));
    const rejected = state.rejected.filter((r) => channel === null || r.channel === channel);
    sendJson(res, 200, { tasks, rejected });
    return true;
  }
  if (sub === '/reset' && method === 'POST') {
    await readBody(req).catch(() => undefined);
    state.reset();
    sendJson(res, 200, { ok: true });
    return true;
  }
  return false;
}
