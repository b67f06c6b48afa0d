import test from 'ava';
import { inflateSync } from 'node:zlib';
import { startSim, simFor, download, isPng, json, staysOpen, type Sim } from './helpers';

let sim: Sim; // baseDelayMs 0: sync calls answer at once

test.before(async () => {
  sim = await startSim({ baseDelayMs: 0 });
});
test.after.always(async () => {
  await sim.close();
});

test('generations returns n URLs whose files are real PNGs', async (t) => {
  const res = await sim.post(`${sim.ch('img-a')}/v1/images/generations`, { model: 'gpt-image-1', prompt: 'a red fox', n: 3, size: '1536x1024' });
  t.is(res.status, 200);
  const body = (await json(res)) as any;
  t.is(body.created, Math.floor(sim.clock.now / 1000));
  t.is(body.model, 'gpt-image-1');
  t.is(body.data.length, 3);
  t.deepEqual(body.data.map((d: any) => d.size), ['1536x1024', '1536x1024', '1536x1024']);
  t.is(body.usage.generated_images, 3);
  t.is(body.usage.output_tokens, 3 * (1536 * 1024) / 256);
  t.is(body.usage.input_tokens_details.text_tokens, Math.ceil('a red fox'.length / 4));
  t.is(body.usage.total_tokens, body.usage.input_tokens + body.usage.output_tokens);
  for (const d of body.data) {
    t.true(d.url.startsWith(`${sim.base}/files/img/`));
    const file = await download(d.url);
    t.is(file.status, 200);
    t.is(file.type, 'image/png');
    t.true(isPng(file.bytes));
    t.is(file.bytes.readUInt32BE(16), 8); // width
  }
  t.not(body.data[0].url, body.data[1].url);
});

test('b64_json carries the PNG inline and decodes to 8x8 RGB pixels', async (t) => {
  const res = await sim.post(`${sim.ch('img-a')}/v1/images/generations`, { model: 'gpt-image-1', prompt: 'tiny', response_format: 'b64_json' });
  const body = (await json(res)) as any;
  t.is(body.data.length, 1);
  t.is(body.data[0].url, undefined);
  const png = Buffer.from(body.data[0].b64_json, 'base64');
  t.true(isPng(png));
  const idatLen = png.readUInt32BE(33);
  t.is(png.subarray(37, 41).toString('ascii'), 'IDAT');
  const raw = inflateSync(png.subarray(41, 41 + idatLen));
  t.is(raw.length, 8 * (1 + 8 * 3));
});

test('validation errors use the OpenAI error shape', async (t) => {
  const url = `${sim.ch('img-v')}/v1/images/generations`;
  const cases: Array<[unknown, string, string | null]> = [
    [{ model: 'gpt-image-1' }, 'prompt', 'missing_required_parameter'],
    [{ model: 'gpt-image-1', prompt: 'x', n: 11 }, 'n', 'invalid_value'],
    [{ model: 'gpt-image-1', prompt: 'x', size: 'big' }, 'size', 'invalid_value'],
    [{ model: 'gpt-image-1', prompt: 'x', response_format: 'png' }, 'response_format', 'invalid_value'],
    [{ model: 'seedream-2k', prompt: 'x', size: '1024x1024' }, 'size', 'invalid_value'],
    [{ model: 'flux-url-only', prompt: 'x', image: 'data:image/png;base64,AAAA' }, 'image', 'invalid_image'],
    [{ model: 'gpt-image-1', prompt: 'x', image: 'ftp://nope' }, 'image', 'invalid_image'],
  ];
  for (const [body, param, code] of cases) {
    const res = await sim.post(url, body);
    t.is(res.status, 400, JSON.stringify(body));
    const err = ((await json(res)) as any).error;
    t.is(err.type, 'invalid_request_error');
    t.is(err.param, param);
    t.is(err.code, code);
  }
  const ok = await sim.post(url, { model: 'seedream-2k', prompt: 'x', size: '2048x2048' });
  t.is(ok.status, 200);
  const tasks = await sim.control.tasks('img-v');
  t.is(tasks.tasks.length, 1, 'rejected requests are not recorded as submissions');
});

test('edits: JSON needs an image; references are recorded as sent', async (t) => {
  const url = `${sim.ch('img-e')}/v1/images/edits`;
  const missing = await sim.post(url, { model: 'gpt-image-1', prompt: 'add a hat' });
  t.is(missing.status, 400);
  t.is(((await json(missing)) as any).error.param, 'image');
  const res = await sim.post(url, { model: 'gpt-image-1', prompt: 'add a hat', image: ['https://x/a.png'], image_urls: ['data:image/png;base64,AAAA'], n: 2 });
  t.is(res.status, 200);
  const body = (await json(res)) as any;
  t.is(body.data.length, 2);
  t.is(body.usage.input_tokens_details.image_tokens, 2 * 85);
  const [task] = (await sim.control.tasks('img-e')).tasks;
  t.is(task.api, 'openai_images');
  t.is(task.path, '/v1/images/edits');
  t.deepEqual(task.body.image, ['https://x/a.png']);
});

test('edits: multipart with image[] files and text fields', async (t) => {
  const form = new FormData();
  form.append('model', 'gpt-image-1');
  form.append('prompt', 'make it blue');
  form.append('n', '2');
  form.append('image[]', new Blob([Buffer.from('one')], { type: 'image/png' }), 'a.png');
  form.append('image[]', new Blob([Buffer.from('second')], { type: 'image/png' }), 'b.png');
  const res = await fetch(`${sim.ch('img-m')}/v1/images/edits`, { method: 'POST', body: form });
  t.is(res.status, 200);
  const body = (await json(res)) as any;
  t.is(body.data.length, 2);
  t.is(body.usage.input_tokens_details.image_tokens, 170);
  const [task] = (await sim.control.tasks('img-m')).tasks;
  t.is(task.body.fields.prompt, 'make it blue');
  t.deepEqual(task.body.files.map((f: any) => [f.field, f.filename, f.bytes]), [['image[]', 'a.png', 3], ['image[]', 'b.png', 6]]);
  const noFile = new FormData();
  noFile.append('prompt', 'x');
  const bad = await fetch(`${sim.ch('img-m')}/v1/images/edits`, { method: 'POST', body: noFile });
  t.is(bad.status, 400);
});

test('sync faults: fail 500, expire 504, fewer_outputs, hang', async (t) => {
  const ch = 'img-f';
  const url = `${sim.ch(ch)}/v1/images/generations`;
  await sim.control.fault(ch, { type: 'fail' }, { times: 1 });
  const failed = await sim.post(url, { prompt: 'x' });
  t.is(failed.status, 500);
  t.is(((await json(failed)) as any).error.type, 'server_error');
  await sim.control.fault(ch, { type: 'expire' }, { times: 1 });
  const expired = await sim.post(url, { prompt: 'x' });
  t.is(expired.status, 504);
  await sim.control.fault(ch, { type: 'fewer_outputs', count: 2 }, { times: 1 });
  const few = (await (await sim.post(url, { prompt: 'x', n: 4 })).json()) as any;
  t.is(few.data.length, 2);
  t.is(few.usage.generated_images, 2);
  const normal = (await (await sim.post(url, { prompt: 'x', n: 4 })).json()) as any;
  t.is(normal.data.length, 4, 'times: 1 faults are used up');
  await sim.control.fault(ch, { type: 'hang' }, { times: 1 });
  t.true(await staysOpen(sim.post(url, { prompt: 'x' })));
});

test('async image task: queued, running, succeeded with data and served files', async (t) => {
  const timed = await simFor(t);
  const ch = 'img-async';
  const res = await timed.post(`${timed.ch(ch)}/v1/images/tasks`, { model: 'gpt-image-1', prompt: 'a lighthouse', n: 2 });
  t.is(res.status, 200);
  const sub = (await json(res)) as any;
  t.regex(sub.id, /^imgtask_\d{6}$/);
  t.is(sub.status, 'queued');
  t.is(sub.endpoint, 'generations');
  t.is(sub.created_at, Math.floor(timed.clock.now / 1000));
  const poll = async () => (await (await fetch(`${timed.ch(ch)}/v1/images/tasks/${sub.id}`)).json()) as any;
  t.is((await poll()).status, 'queued');
  timed.clock.advance(500);
  const running = await poll();
  t.is(running.status, 'running');
  t.is(running.data, undefined);
  timed.clock.advance(500);
  const done = await poll();
  t.is(done.status, 'succeeded');
  t.is(done.data.length, 2);
  t.is(done.usage.generated_images, 2);
  t.is(done.completed_at, Math.floor((timed.clock.now) / 1000));
  const file = await download(done.data[0].url);
  t.is(file.status, 200);
  t.true(isPng(file.bytes));
  const other = await fetch(`${timed.ch('someone-else')}/v1/images/tasks/${sub.id}`);
  t.is(other.status, 404, "another channel cannot see the task");
});

test('async image task files are not served before the task finishes', async (t) => {
  const timed = await simFor(t);
  const ch = 'img-early';
  const sub = (await (await timed.post(`${timed.ch(ch)}/v1/images/tasks`, { prompt: 'x' })).json()) as any;
  const key = `${timed.base}/files/img/${sub.id}/0.png`;
  t.is((await download(key)).status, 404);
  timed.clock.advance(1000);
  t.is((await download(key)).status, 200);
});

test('async image task faults: fail, expire, hang, poll_fail, fewer_outputs', async (t) => {
  const timed = await simFor(t);
  const ch = 'img-async-f';
  const submit = async () => ((await (await timed.post(`${timed.ch(ch)}/v1/images/tasks`, { prompt: 'x', n: 3, image: 'https://x/r.png' })).json()) as any).id as string;
  const poll = (id: string) => fetch(`${timed.ch(ch)}/v1/images/tasks/${id}`);
  await timed.control.fault(ch, { type: 'fail' }, { times: 1 });
  const failed = await submit();
  await timed.control.fault(ch, { type: 'expire' }, { times: 1 });
  const expired = await submit();
  await timed.control.fault(ch, { type: 'hang' }, { times: 1 });
  const hung = await submit();
  await timed.control.fault(ch, { type: 'poll_fail', count: 2 }, { times: 1 });
  const flaky = await submit();
  await timed.control.fault(ch, { type: 'fewer_outputs', count: 1 }, { times: 1 });
  const few = await submit();
  timed.clock.advance(60_000);
  const f = (await (await poll(failed)).json()) as any;
  t.is(f.status, 'failed');
  t.is(f.error.code, 'generation_failed');
  t.is(f.data, undefined);
  const e = (await (await poll(expired)).json()) as any;
  t.is(e.status, 'expired');
  t.is(e.error.code, 'task_expired');
  const h = (await (await poll(hung)).json()) as any;
  t.is(h.status, 'running');
  t.is(h.endpoint, 'edits');
  t.is((await poll(flaky)).status, 500);
  t.is((await poll(flaky)).status, 500);
  const third = await poll(flaky);
  t.is(third.status, 200);
  t.is(((await json(third)) as any).data.length, 3);
  const fw = (await (await poll(few)).json()) as any;
  t.is(fw.data.length, 1);
  t.is(fw.usage.generated_images, 1);
});

test('baseDelayMs 0 completes an async task on its first poll', async (t) => {
  const sub = (await (await sim.post(`${sim.ch('img-zero')}/v1/images/tasks`, { prompt: 'x' })).json()) as any;
  const first = (await (await fetch(`${sim.ch('img-zero')}/v1/images/tasks/${sub.id}`)).json()) as any;
  t.is(first.status, 'succeeded');
  t.is(first.data.length, 1);
});
