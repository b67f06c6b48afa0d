import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMediaHandler } from '../../dev/simulator/media/index';
import { simFor, json, staysOpen } from './helpers';

const ARK = '/api/v3/contents/generations/tasks';
const VIDEO = { model: 'seedance', content: [{ type: 'text', text: 'waves' }] };

test('submit_status answers with the status and a vendor-shaped or given body, without creating a task', async (t) => {
  const sim = await simFor(t);
  await sim.control.fault('c1', { type: 'submit_status', status: 429 }, { times: 1 });
  const limited = await sim.post(`${sim.ch('c1')}${ARK}`, VIDEO);
  t.is(limited.status, 429);
  t.is((await json(limited)).error.code, 'RateLimitExceeded.EndpointRPMExceeded');
  await sim.control.fault('c1', { type: 'submit_status', status: 503, body: { error: { code: 'ServiceUnavailable', message: 'busy' } } }, { times: 1 });
  const busy = await sim.post(`${sim.ch('c1')}${ARK}`, VIDEO);
  t.is(busy.status, 503);
  t.deepEqual(await json(busy), { error: { code: 'ServiceUnavailable', message: 'busy' } });
  await sim.control.fault('c1', { type: 'submit_status', status: 500 }, { times: 1 });
  const mj = await sim.post(`${sim.ch('c1')}/mj/submit/imagine`, { prompt: 'x' });
  t.is(mj.status, 500);
  const ok = await sim.post(`${sim.ch('c1')}${ARK}`, VIDEO);
  t.is(ok.status, 200);
  const { tasks, rejected } = await sim.control.tasks('c1');
  t.is(tasks.length, 1);
  t.deepEqual(rejected.map((r) => [r.fault, r.path]), [['submit_status', ARK], ['submit_status', ARK], ['submit_status', '/mj/submit/imagine']]);
});

test('submit_reset destroys the socket; submit_hang never answers', async (t) => {
  const sim = await simFor(t);
  await sim.control.fault('c2', { type: 'submit_reset' }, { times: 1 });
  await t.throwsAsync(sim.post(`${sim.ch('c2')}${ARK}`, VIDEO));
  await sim.control.fault('c2', { type: 'submit_hang' }, { times: 1 });
  t.true(await staysOpen(sim.post(`${sim.ch('c2')}${ARK}`, VIDEO)));
  t.is(sim.media.state.hung.size, 1);
  const { tasks, rejected } = await sim.control.tasks('c2');
  t.is(tasks.length, 0);
  t.deepEqual(rejected.map((r) => r.fault), ['submit_reset', 'submit_hang']);
  t.is((await sim.post(`${sim.ch('c2')}${ARK}`, VIDEO)).status, 200);
});

test('faults without times stay until DELETE; match narrows them; channels are separate', async (t) => {
  const sim = await simFor(t);
  await sim.control.fault('c3', { type: 'submit_status', status: 502 });
  await sim.control.fault('c3', { type: 'submit_status', status: 418 }, { match: '/suno/' });
  t.is((await sim.post(`${sim.ch('c3')}${ARK}`, VIDEO)).status, 502);
  t.is((await sim.post(`${sim.ch('c3')}${ARK}`, VIDEO)).status, 502);
  t.is((await sim.post(`${sim.ch('c4')}${ARK}`, VIDEO)).status, 200, 'another channel is untouched');
  const listed = await json(fetch(`${sim.base}/_control/media/faults?channel=c3`));
  t.is(listed.faults.length, 2);
  t.is(listed.faults[1].match, '/suno/');
  t.is((await fetch(`${sim.base}/_control/media/faults?channel=c3`, { method: 'DELETE' })).status, 200);
  t.is((await sim.post(`${sim.ch('c3')}${ARK}`, VIDEO)).status, 200);
  await sim.control.fault('c3', { type: 'submit_status', status: 418 }, { match: '/suno/' });
  t.is((await sim.post(`${sim.ch('c3')}${ARK}`, VIDEO)).status, 200);
  t.is((await sim.post(`${sim.ch('c3')}/suno/submit/music`, { prompt: 'x' })).status, 418);
});

test('times counts submissions; task faults combine on one task', async (t) => {
  const sim = await simFor(t, { baseDelayMs: 0 });
  await sim.control.fault('c5', { type: 'submit_status', status: 500 }, { times: 2 });
  t.is((await sim.post(`${sim.ch('c5')}${ARK}`, VIDEO)).status, 500);
  t.is((await sim.post(`${sim.ch('c5')}${ARK}`, VIDEO)).status, 500);
  await sim.control.fault('c5', { type: 'duration', seconds: 3 }, { times: 1 });
  await sim.control.fault('c5', { type: 'poll_fail', count: 1 }, { times: 1 });
  const { id } = await json(sim.post(`${sim.ch('c5')}${ARK}`, VIDEO));
  t.is((await fetch(`${sim.ch('c5')}${ARK}/${id}`)).status, 500);
  const task = await json(fetch(`${sim.ch('c5')}${ARK}/${id}`));
  t.is(task.status, 'succeeded');
  t.is(task.duration, 3);
});

test('tasks lists what was sent: body, headers, path, polls; reset forgets everything', async (t) => {
  const sim = await simFor(t);
  const { id } = await json(sim.post(`${sim.ch('c6')}${ARK}`, { ...VIDEO, duration: 4 }, { authorization: 'Bearer sk-channel-6' }));
  await fetch(`${sim.ch('c6')}${ARK}/${id}`);
  await sim.post(`${sim.ch('c7')}/suno/submit/music`, { prompt: 'x' });
  const { tasks } = await sim.control.tasks('c6');
  t.is(tasks.length, 1);
  t.is(tasks[0].id, id);
  t.is(tasks[0].api, 'ark_video');
  t.is(tasks[0].path, ARK);
  t.is(tasks[0].method, 'POST');
  t.is(tasks[0].model, 'seedance');
  t.deepEqual(tasks[0].body, { ...VIDEO, duration: 4 });
  t.is(tasks[0].headers.authorization, 'Bearer sk-channel-6');
  t.is(tasks[0].status, 'queued');
  t.is(tasks[0].polls, 1);
  t.is((await sim.control.tasks()).tasks.length, 2);
  await sim.control.fault('c6', { type: 'submit_hang' });
  const hanging = sim.post(`${sim.ch('c6')}${ARK}`, VIDEO);
  t.true(await staysOpen(hanging));
  t.is((await sim.post(`${sim.base}/_control/media/reset`, {})).status, 200);
  await t.throwsAsync(hanging, undefined, 'reset drops hung connections');
  t.is((await sim.control.tasks()).tasks.length, 0);
  t.is((await fetch(`${sim.ch('c6')}${ARK}/${id}`)).status, 404);
  const again = await json(sim.post(`${sim.ch('c6')}${ARK}`, VIDEO));
  t.is(again.id, id, 'ids restart after reset: deterministic');
});

test('invalid faults are refused with the reason', async (t) => {
  const sim = await simFor(t);
  const bad = await sim.post(`${sim.base}/_control/media/faults`, { channel: 'c8', fault: { type: 'poll_fail' } });
  t.is(bad.status, 400);
  const body = await json(bad);
  t.is(body.error, 'invalid fault');
  t.true(body.issues.length > 0);
  t.is((await sim.post(`${sim.base}/_control/media/faults`, { fault: { type: 'fail' } })).status, 400);
  t.is((await sim.post(`${sim.base}/_control/media/faults`, { channel: 'c8', fault: { type: 'meteor' } })).status, 400);
});

test('unknown routes are left to the caller (handle resolves false)', async (t) => {
  const sim = await simFor(t);
  const res = await fetch(`${sim.ch('c9')}/v1/chat/completions`, { method: 'POST', body: '{}' });
  t.is(res.status, 404);
  t.is(await res.text(), 'no route');
  const wrongMethod = await fetch(`${sim.ch('c9')}/v1/images/generations`);
  t.is(await wrongMethod.text(), 'no route');
});

test('files resolve under a channel-prefixed publicBaseUrl too', async (t) => {
  const media = createMediaHandler({ baseDelayMs: 0 });
  let base = '';
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', base);
    const m = /^\/ch\/([^/]+)(\/.*)?$/.exec(url.pathname);
    const channel = m ? m[1] : '';
    const handled = await media.handle(req, res, { channel, path: m ? m[2] ?? '/' : url.pathname, url, publicBaseUrl: `${base}/ch/${channel}` });
    if (!handled) res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => { server.closeAllConnections(); server.close(); });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const res = await fetch(`${base}/ch/px/v1/images/generations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'x' }) });
  const { data } = await json(res);
  t.true(data[0].url.startsWith(`${base}/ch/px/files/img/`));
  const file = await fetch(data[0].url);
  t.is(file.status, 200);
  t.is(file.headers.get('content-type'), 'image/png');
  t.is(media.state.tasks.size, 1);
});

test('delay holds the submission answer (sync result or async task id) for ms', async (t) => {
  const sim = await simFor(t, { baseDelayMs: 0 });
  await sim.control.fault('c10', { type: 'delay', ms: 300 }, { times: 2 });
  let started = Date.now();
  const img = await sim.post(`${sim.ch('c10')}/v1/images/generations`, { prompt: 'x' });
  t.is(img.status, 200);
  t.true(Date.now() - started >= 290);
  started = Date.now();
  const { id } = await json(sim.post(`${sim.ch('c10')}${ARK}`, VIDEO));
  t.true(Date.now() - started >= 290);
  t.regex(id, /^cgt-/);
  started = Date.now();
  await sim.post(`${sim.ch('c10')}${ARK}`, VIDEO);
  t.true(Date.now() - started < 250, 'used up after times: 2');
});

test('publicBaseUrlOf takes the configured URL, else the socket\'s address: never Host or X-Forwarded-*', async (t) => {
  const { publicBaseUrlOf } = await import('../../dev/simulator/media/index');
  const req = (localAddress: string) => ({ headers: { host: 'evil.example', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' }, socket: { localAddress, localPort: 8090 } }) as unknown as http.IncomingMessage;
  t.is(publicBaseUrlOf(req('127.0.0.1')), 'http://127.0.0.1:8090');
  t.is(publicBaseUrlOf(req('::ffff:10.0.0.5')), 'http://10.0.0.5:8090');
  t.is(publicBaseUrlOf(req('::1')), 'http://[::1]:8090');
  t.is(publicBaseUrlOf(req('127.0.0.1'), 'http://simulator:8090/'), 'http://simulator:8090');
});
