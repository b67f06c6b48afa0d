import test from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import { GRANT, PNG, PNG_URI, credits, newestTask, startKit, type Kit } from './images-kit';
import { IMAGES_BODY_LIMIT } from '../../gateway/routes/images';

/** POST /v1/images/edits as JSON or multipart/form-data (spec 2 section 4.3); gpt-image-1 at 0.04 per image. */
let kit: Kit;
test.before(async () => {
  kit = await startKit();
});
test.after.always(async () => kit?.gw.close());

const EDITS = '/v1/images/edits';
const UNIT = credits('0.04');
const png = (bytes: Buffer = PNG) => new Blob([new Uint8Array(bytes)], { type: 'image/png' });

/** What the images channel received for the request carrying this prompt. */
async function received(prompt: string) {
  const subs = [...(await kit.upstream('openai-images-a')), ...(await kit.upstream('openai-images-b'))];
  const hit = subs.filter((s) => s.body.prompt === prompt);
  if (hit.length !== 1) throw new Error(`expected one submission for ${prompt}, got ${hit.length}`);
  return hit[0];
}

test('multipart: file field image, text fields passed through with n as a number; files become data: URIs', async (t) => {
  const a = await kit.account();
  const f = new FormData();
  f.set('model', 'gpt-image-1');
  f.set('prompt', 'edit one file');
  f.set('n', '2');
  f.set('size', '1024x1024');
  f.set('quality', 'high');
  f.set('image', png(), 'cat.png');
  const r = await kit.form(a.key, EDITS, f);
  t.is(r.status, 200, await r.clone().text());
  const body = (await r.json()) as { data: unknown[] };
  t.is(body.data.length, 2);
  t.is(await kit.balance(a.id), GRANT - 2 * UNIT);
  const up = await received('edit one file');
  t.is(up.path, '/v1/images/edits');
  t.deepEqual(up.body.image, [PNG_URI]);
  t.is(up.body.n, 2);
  t.is(up.body.quality, 'high');
  t.is(up.body.model, 'gpt-image-1');
  const doc = await newestTask(kit, a.id);
  t.is(doc.endpoint, 'edits');
  t.regex((doc.input.image as string[])[0], /^task-file:/);
});

test('multipart: several image[] files, URL parts and image_urls[] keep their order; a mask file passes through', async (t) => {
  const a = await kit.account();
  const second = Buffer.concat([PNG, Buffer.from('second')]);
  const f = new FormData();
  f.set('model', 'gpt-image-1');
  f.set('prompt', 'edit many');
  f.append('image[]', png(), 'a.png');
  f.append('image[]', 'https://example.com/b.png');
  f.append('image[]', new Blob([new Uint8Array(second)], { type: 'application/octet-stream' }), 'c.bin'); // sniffed as PNG
  f.append('image_urls[]', 'https://example.com/d.png');
  f.set('mask', png(), 'mask.png');
  const r = await kit.form(a.key, EDITS, f);
  t.is(r.status, 200, await r.clone().text());
  const up = (await received('edit many')).body;
  t.deepEqual(up.image, [PNG_URI, 'https://example.com/b.png', `data:image/png;base64,${second.toString('base64')}`, 'https://example.com/d.png']);
  t.is(up.mask, PNG_URI);
  t.false('image_urls' in up);
});

test('multipart async=true: queued answer, then the final body at GET /v1/images/edits/{id}, listed as edits', async (t) => {
  const a = await kit.account();
  const f = new FormData();
  f.set('model', 'gpt-image-1');
  f.set('prompt', 'edit async');
  f.set('async', 'true');
  f.set('image', png(), 'x.png');
  const r = await kit.form(a.key, EDITS, f);
  t.is(r.status, 200);
  const sub = (await r.json()) as { id: string; status: string; model: string; created_at: number };
  t.deepEqual(Object.keys(sub).sort(), ['created_at', 'id', 'model', 'status']);
  t.is(sub.status, 'queued');
  const final = await kit.final(a.key, sub.id, EDITS);
  t.is(final.status, 200);
  t.is(((await final.json()) as any).data.length, 1);
  const list = (await (await kit.get(a.key, '/v1/images/generations')).json()) as { data: Array<Record<string, any>> };
  t.is(list.data.find((x) => x.id === sub.id)?.endpoint, 'edits');
});

test('missing reference image: 400 for JSON and for multipart, nothing reserved', async (t) => {
  const a = await kit.account();
  const j = await kit.post(a.key, EDITS, { model: 'gpt-image-1', prompt: 'no image' });
  t.is(j.status, 400);
  const je = ((await j.json()) as any).error;
  t.is(je.code, 'invalid_request');
  t.is(je.param, 'image');
  const f = new FormData();
  f.set('model', 'gpt-image-1');
  f.set('prompt', 'no image');
  const m = await kit.form(a.key, EDITS, f);
  t.is(m.status, 400);
  t.is(((await m.json()) as any).error.param, 'image');
  t.is(await kit.balance(a.id), GRANT);
  t.is((await kit.tasksOf(a.id)).length, 0);
});

test('JSON edits take the generations shape (image + image_urls merged)', async (t) => {
  const a = await kit.account();
  const r = await kit.post(a.key, EDITS, { model: 'gpt-image-1', prompt: 'edit json', image: PNG_URI, image_urls: ['https://example.com/z.png'] });
  t.is(r.status, 200);
  t.deepEqual((await received('edit json')).body.image, [PNG_URI, 'https://example.com/z.png']);
});

test('a file that is not an image, an empty file, a bad async value: 400 naming the field', async (t) => {
  const a = await kit.account();
  const bad = async (set: (f: FormData) => void, param: string) => {
    const f = new FormData();
    f.set('model', 'gpt-image-1');
    f.set('prompt', 'bad');
    set(f);
    const r = await kit.form(a.key, EDITS, f);
    t.is(r.status, 400);
    t.is(((await r.json()) as any).error.param, param);
  };
  await bad((f) => f.set('image', new Blob(['just text'], { type: 'text/plain' }), 'a.txt'), 'image');
  await bad((f) => f.set('image', new Blob([], { type: 'image/png' }), 'empty.png'), 'image');
  await bad((f) => {
    f.set('image', png(), 'a.png');
    f.set('async', 'maybe');
  }, 'async');
  t.is(await kit.balance(a.id), GRANT);
});

test('Idempotency-Key on multipart compares content, not the random boundary', async (t) => {
  const a = await kit.account();
  const make = (prompt: string) => {
    const f = new FormData();
    f.set('model', 'gpt-image-1');
    f.set('prompt', prompt);
    f.set('async', 'true');
    f.set('image', png(), 'x.png');
    return f;
  };
  const r1 = await kit.form(a.key, EDITS, make('edit idem'), { 'Idempotency-Key': 'form-1' });
  const t1 = await r1.text();
  const r2 = await kit.form(a.key, EDITS, make('edit idem'), { 'Idempotency-Key': 'form-1' });
  t.is(r2.headers.get('idempotency-replayed'), 'true');
  t.is(await r2.text(), t1);
  const r3 = await kit.form(a.key, EDITS, make('edit idem changed'), { 'Idempotency-Key': 'form-1' });
  t.is(r3.status, 409);
  t.is(((await r3.json()) as any).error.code, 'idempotency_key_reuse');
  t.is((await kit.tasksOf(a.id)).length, 1);
});

test('a 20 MB upload: stored in task_files chunks of at most 8 MB, the task document stays small, the upstream gets it whole', async (t) => {
  const a = await kit.account();
  const big = Buffer.concat([PNG, randomBytes(20 * 1024 * 1024)]);
  const f = new FormData();
  f.set('model', 'gpt-image-1');
  f.set('prompt', 'edit big');
  f.set('image', png(big), 'big.png');
  const r = await kit.form(a.key, EDITS, f);
  t.is(r.status, 200, await r.clone().text());
  const doc = await newestTask(kit, a.id);
  t.true(JSON.stringify(doc.input).length < 1000);
  const chunks = await kit.gw.deps.db.TaskFile.find({ group: doc.request_id }).lean();
  t.is(chunks.length, 3);
  const size = (d: unknown) => (Buffer.isBuffer(d) ? d.length : (d as { position: number }).position); // lean reads give a BSON Binary
  t.deepEqual(chunks.map((c) => size(c.data)).sort((x, y) => y - x), [8 * 1024 * 1024, 8 * 1024 * 1024, big.length - 16 * 1024 * 1024]);
  const up = await received('edit big');
  const sent = (up.body.image as string[])[0];
  t.true(sent.startsWith('data:image/png;base64,'));
  const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  t.is(digest(Buffer.from(sent.slice('data:image/png;base64,'.length), 'base64')), digest(big));
  t.is(await kit.balance(a.id), GRANT - UNIT);
});

test('body above 95 MB: 413 in the OpenAI error shape (declared length and chunked upload)', async (t) => {
  const a = await kit.account();
  const over = IMAGES_BODY_LIMIT + 1024;
  const f = new FormData();
  f.set('model', 'gpt-image-1');
  f.set('prompt', 'too big');
  f.set('image', new Blob([new Uint8Array(over)], { type: 'image/png' }), 'huge.png');
  const r = await kit.form(a.key, EDITS, f);
  t.is(r.status, 413);
  const e = ((await r.json()) as any).error;
  t.is(e.code, 'invalid_request');
  t.is(e.type, 'invalid_request_error');
  // No Content-Length: the limit is counted while reading.
  const boundary = 'xBOUNDARYx';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`);
  const chunk = Buffer.alloc(1024 * 1024);
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent === 0) c.enqueue(head);
      if (sent > over) return c.close();
      sent += chunk.length;
      c.enqueue(chunk);
    },
  });
  const chunked = await fetch(`${kit.gw.url}${EDITS}`, {
    method: 'POST', headers: { authorization: `Bearer ${a.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, body: stream, duplex: 'half',
  } as RequestInit);
  t.is(chunked.status, 413);
  t.is(((await chunked.json()) as any).error.code, 'invalid_request');
  t.is(await kit.balance(a.id), GRANT);
});

test('the OpenAI SDK: images.edit with several files and images.generate work unchanged', async (t) => {
  const { default: OpenAI, toFile } = await import('openai');
  const a = await kit.account();
  const client = new OpenAI({ baseURL: `${kit.gw.url}/v1`, apiKey: a.key, maxRetries: 0 });
  const edited = await client.images.edit({
    model: 'gpt-image-1', prompt: 'sdk edit', n: 2, size: '1024x1024',
    image: [await toFile(PNG, 'a.png', { type: 'image/png' }), await toFile(PNG, 'b.png', { type: 'image/png' })],
  });
  t.is(edited.data?.length, 2);
  t.deepEqual((await received('sdk edit')).body.image, [PNG_URI, PNG_URI]);
  const generated = await client.images.generate({ model: 'gpt-image-1', prompt: 'sdk generate', response_format: 'b64_json' });
  t.is(typeof generated.data?.[0].b64_json, 'string');
  t.is(await kit.balance(a.id), GRANT - 3 * UNIT);
});

test("a stored-file reference the client wrote is refused: another account's upload never reaches this task's vendor", async (t) => {
  const victim = await kit.account();
  const secret = Buffer.concat([PNG, Buffer.from('victim-private-bytes')]);
  const uri = `data:image/png;base64,${secret.toString('base64')}`;
  const v = await kit.post(victim.key, EDITS, { model: 'gpt-image-1', prompt: 'victim edit', image: uri, async: true });
  t.is(v.status, 200, await v.clone().text());
  const stored = (await newestTask(kit, victim.id)).input.image as string[];
  t.regex(stored[0], /^task-file:/);

  const attacker = await kit.account();
  const before = await kit.balance(attacker.id);
  for (const body of [
    { model: 'gpt-image-1', prompt: 'attacker mask', image: 'https://example.com/a.png', mask: stored[0] },
    { model: 'gpt-image-1', prompt: 'attacker image', image: [stored[0]] },
  ]) {
    const r = await kit.post(attacker.key, EDITS, body);
    t.is(r.status, 400, await r.clone().text());
    const err = ((await r.json()) as { error: { code: string; param: string } }).error;
    t.is(err.code, 'invalid_request');
    t.regex(err.param, /^(mask|image)/);
  }
  t.is(await kit.balance(attacker.id), before);
  const seen = [...(await kit.upstream('openai-images-a')), ...(await kit.upstream('openai-images-b'))];
  t.false(seen.some((s) => String(s.body.prompt).startsWith('attacker')));
});

test('the adapter loads only its own task\'s stored files', async (t) => {
  const { resolveValue } = await import('../../providers/media/images-files');
  const a = await kit.account();
  const r = await kit.post(a.key, EDITS, { model: 'gpt-image-1', prompt: 'own file', image: PNG_URI, async: true });
  t.is(r.status, 200);
  const doc = await newestTask(kit, a.id);
  const ref = (doc.input.image as string[])[0];
  const own = { task: { _id: doc._id, request_id: doc.request_id }, taskFiles: kit.gw.deps.db.TaskFile } as never;
  t.is(await resolveValue(own, ref), PNG_URI);
  const other = { task: { _id: 'task_other', request_id: 'req_0000000000000000000000ff' }, taskFiles: kit.gw.deps.db.TaskFile } as never;
  await t.throwsAsync(resolveValue(other, ref), { message: /another submission/ });
});
