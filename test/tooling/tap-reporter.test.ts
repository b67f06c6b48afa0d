// The test runner's TAP reader: counts, and the recap of failures it prints
// just above the closing `N passed, N failed` line (a CI log is often read
// from its tail only).
import test from 'ava';
import { failureRecap, summaryLine, TapReporter } from '../../dev/scripts/lib/tap';

function read(lines: string[]): { reporter: TapReporter; printed: string[] } {
  const printed: string[] = [];
  const reporter = new TapReporter((l) => printed.push(l));
  for (const l of lines) reporter.line(l);
  return { reporter, printed };
}

test('counts passes, failures and skips, and keeps each failure with its detail', (t) => {
  const { reporter } = read([
    'TAP version 13',
    'ok 1 - wallet › a',
    'not ok 2 - chat › b',
    '  ---',
    '    name: AssertionError',
    '    message: expected 1',
    '  ...',
    'ok 3 - c # SKIP',
    'not ok 4 - after.always hook',
    '# tests 4',
  ]);
  t.deepEqual(reporter.counts, { passed: 1, failed: 2, skipped: 1 });
  t.deepEqual(reporter.failures.map((f) => f.title), ['chat › b', 'after.always hook']);
  t.true(reporter.failures[0]!.detail.some((l) => l.includes('expected 1')));
  t.deepEqual(reporter.failures[1]!.detail, []);
  t.is(summaryLine(reporter.counts), '1 passed, 2 failed, 1 skipped');
});

test("a failed test's t.log lines between its `not ok` and its YAML block do not cut the detail off", (t) => {
  const { reporter } = read([
    'not ok 1 - chaos › short chaos run',
    '#   chaos: seed 1, 45 s',
    '#   figures {"a":1}',
    '  ---',
    '    name: AssertionError',
    "        -   '3 task(s) not final after 200 s',",
    '  ...',
    'ok 2 - next',
  ]);
  t.true(reporter.failures[0]!.detail.some((l) => l.includes('not final')));
  t.is(reporter.counts.passed, 1);
});

test('the recap names every failure and caps long details', (t) => {
  const detail = Array.from({ length: 40 }, (_, i) => `      line ${i}`);
  const recap = failureRecap([{ title: 'x › y', detail }]);
  t.true(recap.includes('  ✘ x › y'));
  t.true(recap.includes('      line 24'));
  t.false(recap.includes('      line 25'));
  t.true(recap.some((l) => l.includes('15 more lines')));
  t.deepEqual(failureRecap([]), []);
});
