import test from 'ava';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** The README's folder table names every top-level entry of the repository, so a newcomer finds each room from one table. */
test('the README table lists every top-level entry', (t) => {
  const tracked = execFileSync('git', ['ls-files'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  const tops = [...new Set(tracked.map((f) => (f.includes('/') ? `${f.split('/')[0]}/` : f)))].filter((e) => fs.existsSync(e.replace(/\/$/, '')));
  const readme = fs.readFileSync('README.md', 'utf8');
  const start = readme.search(/^\| Entry \|/m);
  t.true(start >= 0, 'README.md has a table starting with "| Entry |"');
  const rows = readme.slice(start).split('\n').filter((l, i, all) => l.startsWith('|') && all.slice(0, i).every((p) => p.startsWith('|')));
  const named = new Set(rows.flatMap((r) => [...(r.split('|')[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!)));
  t.deepEqual(tops.filter((e) => !named.has(e)), [], 'top-level entries missing from the README table');
});
