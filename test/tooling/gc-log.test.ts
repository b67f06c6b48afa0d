import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { readGcLines } from '../../dev/bench/lib/gc-log';
import { scratchDir } from '../../dev/scripts/lib/scratch';

test('bench GC log: the --trace-gc-nvp lines of Node 20 ([pid:isolate]) and Node 24 ([pid:isolate:thread]) are both read', (t) => {
  const file = path.join(scratchDir('gc-log'), 'gateway.log');
  fs.writeFileSync(file, [
    '{"level":"info","msg":"gateway listening"}',
    '[20076:0xd080e90]       54 ms: pause=0.6 mutator=50.7 gc=s reduce_memory=0 promoted=1890488',
    '[9044:0x17d34000:0]   116252 ms: pause=5.5 mutator=5469.4 gc=s reduce_memory=0 promoted=1024',
    '[9044:0x17d34000:0]   116300 ms: pause=12.0 mutator=40.0 gc=mc reduce_memory=0 incremental.steps_took=30.5',
  ].join('\n'));
  const lines = readGcLines(file);
  t.deepEqual(lines.map((l) => [l.atMs, l.kind, l.pauseMs]), [[54, 'scavenge', 0.6], [116252, 'scavenge', 5.5], [116300, 'mark-compact', 12]]);
  t.is(lines[1].promoted, 1024);
  t.is(lines[2].stepsMs, 30.5);
});
