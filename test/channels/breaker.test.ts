// The breaker's state machine and how the ladder uses it (pure: no stack needed).
import test from 'ava';
import { CircuitBreaker } from '../../domain/channel-breaker';
import { climbLadder, CHAT_LADDER, UpstreamHttpError, UpstreamTransportError, type LadderBreaker } from '../../domain/channel-ladder';

const policy = { failureThreshold: 3, coolDownMs: 1000 };

test('closed -> open after N consecutive failures; a success in between resets the count', (t) => {
  const b = new CircuitBreaker(policy);
  b.record('failed', 0);
  b.record('failed', 1);
  b.record('ok', 2);
  b.record('failed', 3);
  b.record('failed', 4);
  t.is(b.snapshot(5).state, 'closed');
  t.true(b.record('failed', 5, 'HTTP 500'));
  t.like(b.snapshot(6), { state: 'open', consecutive_failures: 3, opened_at: 5, probe_after: 1005, last_failure: 'HTTP 500', opens: 1 });
  t.false(b.admit(500));
});

test('half-open lets one probe through; success closes, failure reopens', (t) => {
  const b = new CircuitBreaker(policy);
  for (let i = 0; i < 3; i++) b.record('failed', 0);
  t.is(b.snapshot(1000).state, 'half_open');
  t.true(b.admit(1000));
  t.false(b.admit(1001), 'one probe at a time');
  t.true(b.record('failed', 1002));
  t.is(b.snapshot(1003).state, 'open');
  t.false(b.admit(1500));
  t.true(b.admit(2002));
  t.true(b.record('ok', 2003));
  t.like(b.snapshot(2004), { state: 'closed', consecutive_failures: 0, opens: 2 });
});

test('failures further apart than a cool-down do not chain into a streak', (t) => {
  const b = new CircuitBreaker(policy);
  b.record('failed', 0);
  b.record('failed', 900);
  b.record('failed', 2000);
  t.like(b.snapshot(2001), { state: 'closed', consecutive_failures: 1 });
  b.record('failed', 2500);
  b.record('failed', 3000);
  t.is(b.snapshot(3001).state, 'open');
});

test('a probe that never reports back frees the slot after a cool-down; a neutral verdict frees it at once', (t) => {
  const b = new CircuitBreaker(policy);
  for (let i = 0; i < 3; i++) b.record('failed', 0);
  t.true(b.admit(1000));
  t.false(b.admit(1999));
  t.true(b.admit(2000));
  b.record('neutral', 2001);
  t.true(b.admit(2002));
});

/** A breaker keyed by channel name over CircuitBreaker, with a settable clock. */
function breakers(now: () => number): LadderBreaker<string> & { of(c: string): CircuitBreaker } {
  const map = new Map<string, CircuitBreaker>();
  const of = (c: string) => map.get(c) ?? (map.set(c, new CircuitBreaker(policy)), map.get(c)!);
  return { of, admit: (c) => of(c).admit(now()), record: (c, v, r) => void of(c).record(v, now(), r) };
}

test('the ladder skips an open channel while others are healthy, keeps 3 attempts, and verdicts follow the failure kind', async (t) => {
  let clock = 0;
  const br = breakers(() => clock);
  for (let i = 0; i < 3; i++) br.of('a').record('failed', 0);
  const tried: string[] = [];
  const r = await climbLadder(['a', 'b', 'c', 'd'], CHAT_LADDER, async (c) => {
    tried.push(c);
    if (c === 'b') throw new UpstreamHttpError(503, 'busy', undefined);
    if (c === 'c') throw new UpstreamTransportError('connect', 'refused');
    return c;
  }, { breaker: br });
  t.deepEqual(tried, ['b', 'c', 'd']);
  t.is(r.value, 'd');
  t.is(r.attempts, 3);
  t.is(br.of('b').snapshot(clock).consecutive_failures, 1);
  t.is(br.of('c').snapshot(clock).consecutive_failures, 1);
  // A 4xx is the upstream alive: it resets the count, and does not move on.
  await t.throwsAsync(climbLadder(['b'], CHAT_LADDER, async () => { throw new UpstreamHttpError(400, 'bad', undefined); }, { breaker: br }));
  t.is(br.of('b').snapshot(clock).consecutive_failures, 0);
});

test('with every channel open the ladder still tries them in order; a success closes that one', async (t) => {
  const clock = 10;
  const br = breakers(() => clock);
  for (const c of ['a', 'b']) for (let i = 0; i < 3; i++) br.of(c).record('failed', 0);
  const tried: string[] = [];
  const r = await climbLadder(['a', 'b'], CHAT_LADDER, async (c) => {
    tried.push(c);
    if (c === 'a') throw new UpstreamHttpError(500, 'down', undefined);
    return c;
  }, { breaker: br });
  t.deepEqual(tried, ['a', 'b']);
  t.is(r.value, 'b');
  t.is(br.of('b').snapshot(clock).state, 'closed');
  t.is(br.of('a').snapshot(clock).state, 'open');
});
