import test from 'ava';
import { GRANT, PNG_URI, credits, newestTask, startKit, type Kit } from './images-kit';

/**
 * The pixel-area tier model (seedream-4-0: 0.03 per image up to 2,359,296 px
 * = 1536x1536, 0.045 above; 0.005 per reference image), spec 2 section 4.2.
 */
let kit: Kit;
test.before(async () => {
  kit = await startKit();
});
test.after.always(async () => kit?.gw.close());

const GEN = '/v1/images/generations';
const LOW = credits('0.03');
const HIGH = credits('0.045');
const REF = credits('0.005');

/** What the seedream channel received for the request carrying this prompt. */
async function received(prompt: string) {
  const subs = [...(await kit.upstream('seedream-images-a')), ...(await kit.upstream('seedream-images-b'))];
  const hit = subs.filter((s) => s.body.prompt === prompt);
  if (hit.length !== 1) throw new Error(`expected one submission for ${prompt}, got ${hit.length}`);
  return hit[0].body;
}

async function charged(body: Record<string, unknown>) {
  const a = await kit.account();
  const r = await kit.post(a.key, GEN, { model: 'seedream-4-0', ...body });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${r.status}: ${text}`);
  const doc = await newestTask(kit, a.id);
  return { spent: GRANT - (await kit.balance(a.id)), ledger: await kit.ledger(doc._id), doc, body: JSON.parse(text) };
}

test('1536x1536 (exactly 2.36 Mpx) is the lower tier; the size goes upstream unchanged', async (t) => {
  const c = await charged({ prompt: 'tier low square', size: '1536x1536', n: 2 });
  t.is(c.spent, 2 * LOW);
  t.deepEqual(c.ledger, { reserve: -2 * LOW, settle: 0 });
  t.is((await received('tier low square')).size, '1536x1536');
  t.is(c.body.data[0].size, '1536x1536');
});

test('2048x1152 equals the threshold: lower tier; 1537x1536 is above: higher tier', async (t) => {
  t.is((await charged({ prompt: 'tier wide', size: '2048x1152' })).spent, LOW);
  t.is((await charged({ prompt: 'tier just above', size: '1537x1536' })).spent, HIGH);
});

test('omitted size means the default 2048x2048: the higher tier; nothing invented upstream', async (t) => {
  const c = await charged({ prompt: 'tier default', n: 3 });
  t.is(c.spent, 3 * HIGH);
  t.false('size' in (await received('tier default')));
});

test('reference images: image + image_urls merged in order, each charged once', async (t) => {
  const c = await charged({
    prompt: 'refs merged', size: '1024x1024', n: 2,
    image: ['https://example.com/a.png', PNG_URI], image_urls: ['https://example.com/c.png'],
  });
  t.is(c.spent, 2 * LOW + 3 * REF);
  t.deepEqual(c.ledger, { reserve: -(2 * LOW + 3 * REF), settle: 0 });
  const up = await received('refs merged');
  t.deepEqual(up.image, ['https://example.com/a.png', PNG_URI, 'https://example.com/c.png']);
  t.false('image_urls' in up);
  // the inline image is kept out of the task document
  const stored = c.doc.input.image as string[];
  t.is(stored[0], 'https://example.com/a.png');
  t.regex(stored[1], /^task-file:/);
  t.is(c.body.usage.input_tokens_details.image_tokens, 3 * 85);
});

test('a single string image counts as one reference', async (t) => {
  const c = await charged({ prompt: 'one ref', size: '2048x2048', image: 'https://example.com/x.png' });
  t.is(c.spent, HIGH + REF);
  t.deepEqual((await received('one ref')).image, ['https://example.com/x.png']);
});

test.serial('fewer outputs: the reference charge stays, images are charged as returned', async (t) => {
  await kit.fault('seedream-images-a', { type: 'fewer_outputs', count: 1 }, 1);
  const c = await charged({ prompt: 'fewer seedream', size: '1024x1024', n: 3, image_urls: ['https://example.com/a.png', 'https://example.com/b.png'] });
  t.is(c.body.data.length, 1);
  t.deepEqual(c.ledger, { reserve: -(3 * LOW + 2 * REF), settle: 2 * LOW });
  t.is(c.spent, LOW + 2 * REF);
});

test.serial('upstream 400 (size too small for the model): passed through, nothing charged, references included', async (t) => {
  await kit.fault('seedream-images-a', { type: 'submit_status', status: 400, body: { error: { code: 'invalid_value', message: 'size too small', param: 'size', type: 'invalid_request_error' } } }, 1);
  const a = await kit.account();
  const r = await kit.post(a.key, GEN, { model: 'seedream-4-0', prompt: 'too small', size: '512x512', image: 'https://example.com/a.png' });
  t.is(r.status, 400);
  t.is(((await r.json()) as any).error.param, 'size');
  t.is(await kit.balance(a.id), GRANT);
  const doc = await newestTask(kit, a.id);
  t.deepEqual(await kit.ledger(doc._id), { reserve: -(LOW + REF), settle: LOW + REF });
});
