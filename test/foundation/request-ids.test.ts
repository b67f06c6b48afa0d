import test from 'ava';
import { newRequestId, newTimeFirstId } from '../../platform/ids';

test('request ids keep the published form, grow with time and do not repeat', async (t) => {
  const before = Date.now();
  const ids = Array.from({ length: 50_000 }, () => newRequestId());
  const after = Date.now();
  for (const id of ids) t.regex(id, /^req_[0-9a-f]{24}$/);
  t.is(new Set(ids).size, ids.length, 'every id unique');
  const made = (id: string) => parseInt(id.slice(4, 15), 16);
  for (const id of ids) t.true(made(id) >= before && made(id) <= after, `${id} names the millisecond it was made`);
  // The random part varies in every hex digit (no fixed version or variant digit taken from the UUID).
  for (let pos = 15; pos < 28; pos++) t.true(new Set(ids.map((id) => id[pos])).size === 16, `digit ${pos} takes all 16 values`);
  // Time first: an id made in a later millisecond sorts after every id of an earlier one.
  await new Promise((r) => setTimeout(r, 5));
  const later = newRequestId();
  t.true(ids.every((id) => id < later), 'a later millisecond sorts after');
});

test('task ids are time-first in the same form', (t) => {
  const before = Date.now();
  const a = newTimeFirstId('task');
  t.regex(a, /^task_[0-9a-f]{24}$/);
  t.true(parseInt(a.slice(5, 16), 16) >= before);
  t.not(newTimeFirstId('task'), a);
});
