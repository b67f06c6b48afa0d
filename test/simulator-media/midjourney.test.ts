import test from 'ava';
import { simFor, download, isPng, json } from './helpers';

const PROMPT = 'a castle on a hill --ar 16:9 --hd';

test('imagine: NOT_START, SUBMITTED, IN_PROGRESS with progress, SUCCESS with a grid and 4 images', async (t) => {
  const sim = await simFor(t); // midjourney weight 3: due after 3000 ms
  const sub = await json(sim.post(`${sim.ch('mj')}/mj/submit/imagine`, { prompt: PROMPT, base64Array: ['data:image/png;base64,AAAA'], state: 'order-7' }));
  t.is(sub.code, 1);
  t.is(sub.description, 'Submit success');
  t.regex(sub.result, /^\d{16}$/);
  const fetchTask = () => json(fetch(`${sim.ch('mj')}/mj/task/${sub.result}/fetch`));
  const first = await fetchTask();
  t.is(first.status, 'NOT_START');
  t.is(first.progress, '0%');
  t.is(first.imageUrl, '');
  t.deepEqual(first.imageUrls, []);
  t.is(first.submitTime, sim.clock.now);
  t.is(first.state, 'order-7');
  sim.clock.advance(400);
  t.is((await fetchTask()).status, 'SUBMITTED');
  sim.clock.advance(950); // 1350 of 3000 ms: 45 %
  const mid = await fetchTask();
  t.is(mid.status, 'IN_PROGRESS');
  t.is(mid.progress, '45%');
  t.is(mid.startTime, sim.clock.now - 1350 + 600);
  sim.clock.advance(1650);
  const done = await fetchTask();
  t.is(done.status, 'SUCCESS');
  t.is(done.progress, '100%');
  t.is(done.finishTime, sim.clock.now);
  t.is(done.prompt, PROMPT);
  t.is(done.action, 'IMAGINE');
  t.is(done.failReason, null);
  t.is(done.imageUrls.length, 4);
  t.is(new Set(done.imageUrls).size, 4);
  t.deepEqual(done.buttons.slice(0, 4).map((b: any) => b.label), ['U1', 'U2', 'U3', 'U4']);
  for (const url of [done.imageUrl, ...done.imageUrls]) {
    const f = await download(url);
    t.is(f.status, 200);
    t.is(f.type, 'image/png');
    t.true(isPng(f.bytes));
  }
  const [task] = (await sim.control.tasks('mj')).tasks;
  t.is(task.body.prompt, PROMPT);
  t.deepEqual(task.body.base64Array, ['data:image/png;base64,AAAA']);
});

test('imagine validation: empty prompt and non-data base64 entries', async (t) => {
  const sim = await simFor(t);
  const empty = await sim.post(`${sim.ch('mj')}/mj/submit/imagine`, { prompt: '  ' });
  t.is(empty.status, 400);
  t.is((await json(empty)).code, 4);
  const bad = await sim.post(`${sim.ch('mj')}/mj/submit/imagine`, { prompt: 'x', base64Array: ['https://not-base64'] });
  t.is(bad.status, 400);
  t.is((await json(bad)).description, 'base64 format error');
  t.is((await sim.control.tasks('mj')).tasks.length, 0);
});

test('unknown and foreign task ids are 404; list-by-condition returns own tasks', async (t) => {
  const sim = await simFor(t, { baseDelayMs: 0 });
  const sub = await json(sim.post(`${sim.ch('mj-a')}/mj/submit/imagine`, { prompt: 'x' }));
  t.is((await fetch(`${sim.ch('mj-b')}/mj/task/${sub.result}/fetch`)).status, 404);
  t.is((await fetch(`${sim.ch('mj-a')}/mj/task/999/fetch`)).status, 404);
  const list = await json(sim.post(`${sim.ch('mj-a')}/mj/task/list-by-condition`, { ids: [sub.result, '999'] }));
  t.is(list.length, 1);
  t.is(list[0].id, sub.result);
  t.is(list[0].status, 'SUCCESS');
});

test('faults: fewer_outputs, fail, expire, hang, poll_fail', async (t) => {
  const sim = await simFor(t);
  const ch = 'mj-f';
  const submit = async () => (await json(sim.post(`${sim.ch(ch)}/mj/submit/imagine`, { prompt: 'x' }))).result as string;
  const fetchTask = (id: string) => fetch(`${sim.ch(ch)}/mj/task/${id}/fetch`);
  await sim.control.fault(ch, { type: 'fewer_outputs', count: 2 }, { times: 1 });
  const few = await submit();
  await sim.control.fault(ch, { type: 'fail' }, { times: 1 });
  const failed = await submit();
  await sim.control.fault(ch, { type: 'expire' }, { times: 1 });
  const expired = await submit();
  await sim.control.fault(ch, { type: 'hang' }, { times: 1 });
  const hung = await submit();
  await sim.control.fault(ch, { type: 'poll_fail', count: 1 }, { times: 1 });
  const flaky = await submit();
  sim.clock.advance(3_600_000);
  const f = await json(fetchTask(few));
  t.is(f.status, 'SUCCESS');
  t.is(f.imageUrls.length, 2);
  t.is((await download(f.imageUrls[1])).status, 200);
  t.is((await download(f.imageUrls[1].replace('/1.png', '/3.png'))).status, 404);
  const x = await json(fetchTask(failed));
  t.is(x.status, 'FAILURE');
  t.regex(x.failReason, /failed/);
  t.deepEqual(x.imageUrls, []);
  const e = await json(fetchTask(expired));
  t.is(e.status, 'FAILURE');
  t.is(e.failReason, 'task timeout');
  const h = await json(fetchTask(hung));
  t.is(h.status, 'IN_PROGRESS');
  t.is(h.progress, '99%');
  t.is((await fetchTask(flaky)).status, 500);
  t.is((await json(fetchTask(flaky))).status, 'SUCCESS');
});
