import test from 'ava';
import { randomBytes } from 'node:crypto';
import { connectRedis, sendHot, type RedisClient } from '../../platform/redis';

/**
 * A hot-path command goes out at once when nothing else of the process waits on Redis, and through
 * ioredis's auto-pipeline otherwise; it never overtakes a command issued before it.
 */
let redis: RedisClient;
test.before(() => {
  if (!process.env.REDIS_URL) throw new Error('REDIS_URL is not set: run the suite with `npm test`, which starts the services');
  redis = connectRedis(process.env.REDIS_URL, `hot-${randomBytes(4).toString('hex')}:`);
});
test.after.always(() => redis?.disconnect());

test.serial('alone, a hot command is written at once; under others it joins the auto-pipeline', async (t) => {
  await redis.set('a', '1');
  const first = sendHot(redis, () => redis.get('a'));
  t.is(redis.autoPipelineQueueSize, 0, 'written at once, not queued');
  const second = sendHot(redis, () => redis.get('a'));
  t.is(redis.autoPipelineQueueSize, 1, 'another hot command waits: this one is batched');
  t.deepEqual(await Promise.all([first, second]), ['1', '1']);
  t.true(redis.options.enableAutoPipelining, 'the client is left as it was');
  // Both settled: the next one is alone again.
  const third = sendHot(redis, () => redis.get('a'));
  t.is(redis.autoPipelineQueueSize, 0);
  t.is(await third, '1');
});

test.serial('a hot command never overtakes a command issued before it', async (t) => {
  for (let i = 0; i < 50; i++) {
    void redis.set('order', String(i)); // queued in the auto-pipeline, not yet written
    t.is(await sendHot(redis, () => redis.get('order')), String(i));
  }
});

test.serial('a failed hot command counts as settled', async (t) => {
  await t.throwsAsync(sendHot(redis, () => redis.call('nosuchcommand') as Promise<unknown>));
  const next = sendHot(redis, () => redis.get('a'));
  t.is(redis.autoPipelineQueueSize, 0, 'nothing is left counted in flight');
  t.is(await next, '1');
  t.throws(() => sendHot(redis, () => {
    throw new Error('thrown before sending');
  }));
  const after = sendHot(redis, () => redis.get('a'));
  t.is(redis.autoPipelineQueueSize, 0);
  await after;
});
