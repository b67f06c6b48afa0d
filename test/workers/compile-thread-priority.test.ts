import test from 'ava';
import fs from 'node:fs';
import { threadCompute } from '../../capabilities/knowledge/compute';

/** The nice value of each thread of this process, by thread id (Linux /proc). */
function niceByThread(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return out;
}

test('a compile thread runs niced (KB_COMPILE_THREAD_NICE); the process\'s other threads keep their priority', async (t) => {
  t.timeout(120_000);
  if (!fs.existsSync('/proc/thread-self')) return t.pass('no per-thread nice values here');
  const before = niceByThread();
  const compute = threadCompute({ threads: 1, nice: 7 });
  try {
    await compute.ready();
    const r = await compute.run({
      kind: 'compile', format: 'markdown', data: new TextEncoder().encode('# Priority\n\nA page about scheduling threads.\n'),
      input: { filename: 'priority.md' },
    } as never);
    t.is(r.kind, 'compiled');
    const after = niceByThread();
    const added = [...after].filter(([tid]) => !before.has(tid));
    // The compile thread is niced; threads it did not make (the main thread among them) are not.
    t.true(added.some(([, nice]) => nice === 7), `a new thread at nice 7: ${JSON.stringify(added)}`);
    t.is(after.get(process.pid), before.get(process.pid));
    for (const [tid, nice] of after) if (before.has(tid)) t.is(nice, before.get(tid)!, `thread ${tid} kept its nice value`);
  } finally {
    await compute.close();
  }
});
