import test from 'ava';
import { PassThrough } from 'node:stream';
import { ReadAhead } from '../../platform/read-ahead';

// platform/read-ahead.ts: a body read while its reader waits keeps what arrived before its stream failed,
// hands it over first and in order, and does not hold the first chunk behind a read still under way.

const tick = () => new Promise((r) => setImmediate(r));

test('chunks that arrived before the stream failed are handed over, then the failure', async (t) => {
  const body = new PassThrough();
  const ahead = new ReadAhead<Buffer>(body);
  body.write('a');
  body.write('b');
  await tick();
  body.destroy(new Error('socket hang up'));
  await tick();
  const got: string[] = [];
  const err = await t.throwsAsync(async () => {
    for await (const c of ahead.chunks()) got.push(String(c));
  });
  t.is(got.join(''), 'ab');
  t.is(err?.message, 'socket hang up');
});

test('without a read ahead, the same body loses what had arrived (why the class exists)', async (t) => {
  const body = new PassThrough();
  body.write('a');
  body.write('b');
  await tick();
  body.on('error', () => undefined).destroy(new Error('socket hang up'));
  await tick();
  const got: string[] = [];
  await t.throwsAsync(async () => {
    for await (const c of body) got.push(String(c));
  });
  t.deepEqual(got, []);
});

test('what was read is handed over at once, the rest read on from the body until its end', async (t) => {
  const body = new PassThrough();
  const ahead = new ReadAhead<Buffer>(body);
  body.write('a');
  await tick();
  const it = ahead.chunks();
  // A read is pending (nothing more arrived): the chunk already in hand is not held behind it.
  t.is(String((await it.next()).value), 'a');
  const later = it.next();
  body.write('b');
  t.is(String((await later).value), 'b');
  body.end('c');
  const rest: string[] = [];
  for await (const c of { [Symbol.asyncIterator]: () => it }) rest.push(String(c));
  t.deepEqual(rest, ['c']);
});

test('it stops reading at its limit (the upstream is held back as by an unread body) and goes on when read', async (t) => {
  const body = new PassThrough({ highWaterMark: 4 });
  const ahead = new ReadAhead<Buffer>(body, { limitBytes: 8 });
  const written: boolean[] = [];
  for (let i = 0; i < 6; i++) written.push(body.write('xxxx'));
  await tick();
  t.true(written.includes(false), 'back-pressure reached the writer');
  body.end();
  let bytes = 0;
  for await (const c of ahead.chunks()) bytes += c.length;
  t.is(bytes, 24);
});

test('a body dropped unread (the call refused) fails the pending read quietly', async (t) => {
  const body = new PassThrough();
  new ReadAhead<Buffer>(body);
  body.write('a');
  await tick();
  body.on('error', () => undefined).destroy(new Error('aborted'));
  await tick();
  t.pass('no unhandled rejection');
});

test('a reader that stops before the end releases the body, also while a read is pending; one that reaches the end does not', async (t) => {
  for (const stage of ['read ahead', 'read on'] as const) {
    const body = new PassThrough();
    let released = 0;
    const ahead = new ReadAhead<Buffer>(body, {
      release: () => {
        released++;
        body.on('error', () => undefined).destroy();
      },
    });
    body.write('a');
    await tick();
    const it = ahead.chunks();
    t.is(String((await it.next()).value), 'a');
    if (stage === 'read on') {
      // The chunk read ahead is handed over, the pending read brings one more, then the body itself.
      const later = it.next();
      body.write('b');
      t.is(String((await later).value), 'b');
      const next = it.next();
      body.write('c');
      t.is(String((await next).value), 'c');
    }
    await it.return(undefined);
    t.is(released, 1, stage);
    t.true(body.destroyed, stage);
  }
  const body = new PassThrough();
  let released = 0;
  const ahead = new ReadAhead<Buffer>(body, { release: () => released++ });
  body.end('x');
  let text = '';
  for await (const c of ahead.chunks()) text += String(c);
  t.is(text, 'x');
  t.is(released, 0);
});
