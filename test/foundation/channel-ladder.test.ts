import test from 'ava';
import { CHAT_LADDER, climbLadder, MEDIA_LADDER, UpstreamHttpError, UpstreamTransportError } from '../../domain/channel-ladder';

const CHANNELS = ['a', 'b', 'c', 'd'];

/** Each channel's scripted answer: a value, or a failure to throw. */
function script(answers: Record<string, unknown>) {
  const tried: string[] = [];
  const attempt = async (channel: string, n: number) => {
    tried.push(`${n}:${channel}`);
    const a = answers[channel];
    if (a instanceof Error) throw a;
    return a;
  };
  return { tried, attempt };
}

const http = (status: number) => new UpstreamHttpError(status, `{"error":${status}}`, 'application/json');
const transport = (kind: 'connect' | 'timeout' | 'other') => new UpstreamTransportError(kind, kind);

test('a 5xx or a failed connection moves to the next channel; the answer says which channel and how many tries', async (t) => {
  for (const policy of [CHAT_LADDER, MEDIA_LADDER]) {
    const s = script({ a: http(503), b: transport('connect'), c: 'ok' });
    t.deepEqual(await climbLadder(CHANNELS, policy, s.attempt), { value: 'ok', channel: 'c', attempts: 3 });
    t.deepEqual(s.tried, ['1:a', '2:b', '3:c']);
  }
});

test('at most three channels: the last failure is thrown', async (t) => {
  const s = script({ a: http(500), b: http(502), c: http(504), d: 'never' });
  const err = await t.throwsAsync(climbLadder(CHANNELS, MEDIA_LADDER, s.attempt));
  t.is((err as UpstreamHttpError).status, 504);
  t.deepEqual(s.tried, ['1:a', '2:b', '3:c']);
});

test('a 4xx (429 included) ends the climb: another channel would refuse too', async (t) => {
  for (const status of [400, 401, 404, 422, 429]) {
    const s = script({ a: http(status), b: 'ok' });
    const err = await t.throwsAsync(climbLadder(CHANNELS, CHAT_LADDER, s.attempt));
    t.is((err as UpstreamHttpError).status, status);
    t.deepEqual(s.tried, ['1:a']);
  }
});

test('a timeout ends a chat request (its deadline is spent) but moves a media submission on (each hop has its own timeout)', async (t) => {
  const chat = script({ a: transport('timeout'), b: 'ok' });
  await t.throwsAsync(climbLadder(CHANNELS, CHAT_LADDER, chat.attempt), { instanceOf: UpstreamTransportError });
  t.deepEqual(chat.tried, ['1:a']);
  const media = script({ a: transport('timeout'), b: 'ok' });
  t.like(await climbLadder(CHANNELS, MEDIA_LADDER, media.attempt), { value: 'ok', attempts: 2 });
});

test('anything that is not an upstream failure is thrown at once', async (t) => {
  const s = script({ a: new TypeError('bug'), b: 'ok' });
  await t.throwsAsync(climbLadder(CHANNELS, MEDIA_LADDER, s.attempt), { instanceOf: TypeError });
  t.deepEqual(s.tried, ['1:a']);
});

test('a deadline gives up the pending attempt and tries no further channel', async (t) => {
  const tried: string[] = [];
  const slow = (channel: string) => {
    tried.push(channel);
    return new Promise<string>((resolve) => setTimeout(() => resolve(channel), 500));
  };
  const started = Date.now();
  const err = await t.throwsAsync(climbLadder(CHANNELS, MEDIA_LADDER, slow, { deadline: Date.now() + 50, deadlineMessage: 'no channel answered within 0.05 s' }));
  t.true(Date.now() - started < 400);
  t.true(err instanceof UpstreamTransportError && err.kind === 'timeout');
  t.is(err!.message, 'no channel answered within 0.05 s');
  t.deepEqual(tried, ['a']);
});
