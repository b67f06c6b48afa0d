import test from 'ava';
import { heapGrowingPercent } from '../../platform/heap';

const MB = 1024 ** 2;

test('unset: 100 % growth on a heap capped at 2 GB or more, V8\'s own rule under a lower cap (a pod\'s)', (t) => {
  t.is(heapGrowingPercent(undefined, 4144 * MB), 100, 'a large machine: V8 alone would allow 4x');
  t.is(heapGrowingPercent(undefined, 2048 * MB), 100);
  t.is(heapGrowingPercent(undefined, 524 * MB), 0, 'Node\'s cap under a 1 GiB cgroup: V8 already grows by about 1.45x');
  t.is(heapGrowingPercent(undefined, 688 * MB), 0, '--max-old-space-size=640');
});

test('a configured growth is used as given, 0 included', (t) => {
  t.is(heapGrowingPercent(25, 4144 * MB), 25);
  t.is(heapGrowingPercent(0, 4144 * MB), 0);
  t.is(heapGrowingPercent(100, 524 * MB), 100);
});
