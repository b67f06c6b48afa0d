import test from 'ava';
import { LiveList } from '../../platform/live-list';
import { deadlineIn } from '../../gateway/deadlines';

test('a live list behaves as a set of its entries under any order of adds and removes', (t) => {
  const list = new LiveList<number>();
  const model = new Map<number, ReturnType<typeof list.add>>();
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let i = 0; i < 5_000; i++) {
    const keys = [...model.keys()];
    if (keys.length > 0 && rand(3) === 0) {
      const k = keys[rand(keys.length)];
      t.true(list.delete(model.get(k)!));
      model.delete(k);
    } else {
      model.set(i, list.add(i));
    }
    if (i % 97 === 0) {
      t.deepEqual(list.values(), [...model.keys()], 'insertion order, nothing lost, nothing left over');
      const seen: number[] = [];
      list.forEach((e) => seen.push(e.value));
      t.deepEqual(seen, [...model.keys()]);
    }
    t.is(list.size, model.size);
  }
});

test('a removed entry holds nothing and cannot be removed twice', (t) => {
  const list = new LiveList<{ big: string }>();
  const a = list.add({ big: 'a' });
  const b = list.add({ big: 'b' });
  const c = list.add({ big: 'c' });
  t.true(list.delete(b));
  t.is(b.value, undefined, 'the value is let go: a removed entry that reached the old generation keeps nothing alive');
  t.false(list.delete(b));
  t.deepEqual(list.values().map((v) => v.big), ['a', 'c']);
  t.true(list.delete(a));
  t.true(list.delete(c));
  t.is(list.size, 0);
  t.deepEqual(list.values(), []);
  list.add({ big: 'd' });
  t.deepEqual(list.values().map((v) => v.big), ['d'], 'usable again once empty');
});

test('deadlines: fire once when due, never once cleared, later once reset', async (t) => {
  const fired: string[] = [];
  deadlineIn(40, () => fired.push('due'));
  const cleared = deadlineIn(40, () => fired.push('cleared'));
  const moved = deadlineIn(40, () => fired.push('moved'));
  cleared.clear();
  moved.reset(400);
  await new Promise((r) => setTimeout(r, 200));
  t.deepEqual(fired, ['due']);
  await new Promise((r) => setTimeout(r, 400));
  t.deepEqual(fired, ['due', 'moved']);
  moved.clear(); // after firing: a no-op
});

test('deadlines: one that fires and clears another due in the same sweep stops that one', async (t) => {
  const fired: string[] = [];
  let second: { clear(): void } | undefined;
  deadlineIn(30, () => {
    fired.push('first');
    second?.clear();
  });
  second = deadlineIn(30, () => fired.push('second'));
  await new Promise((r) => setTimeout(r, 150));
  t.deepEqual(fired, ['first']);
});
