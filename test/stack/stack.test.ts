// The stack that `npm test` starts (or that MONGO_URL / REDIS_URL /
// TEMPORAL_ADDRESS point at) answers and has the properties the code relies
// on. Runs only when TEST_STACK is set.
import { Connection } from '@temporalio/client';
import test from 'ava';
import { Redis } from 'ioredis';
import mongoose from 'mongoose';
import { randomUUID } from 'node:crypto';

const stackTest = process.env.TEST_STACK ? test : test.skip;

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

stackTest('mongo: ping answers and a unique index rejects a duplicate insert (11000)', async (t) => {
  const client = new mongoose.mongo.MongoClient(env('MONGO_URL'), { serverSelectionTimeoutMS: 5000 });
  await client.connect();
  const collection = client.db().collection(`stack_test_${randomUUID().replaceAll('-', '')}`);
  try {
    const pong = await client.db('admin').command({ ping: 1 });
    t.is(pong.ok, 1);
    await collection.createIndex({ opId: 1 }, { unique: true });
    await collection.insertOne({ opId: 'task-1:reserve', amount: 5 });
    const err = await t.throwsAsync(collection.insertOne({ opId: 'task-1:reserve', amount: 5 }));
    t.is((err as { code?: number }).code, 11000);
    t.is(await collection.countDocuments({ opId: 'task-1:reserve' }), 1);
  } finally {
    await collection.drop().catch(() => {});
    await client.close();
  }
});

stackTest('redis: PING answers and a Lua script runs atomically via EVAL', async (t) => {
  const redis = new Redis(env('REDIS_URL'), { maxRetriesPerRequest: 1 });
  const key = `stack-test:${randomUUID()}`;
  try {
    t.is(await redis.ping(), 'PONG');
    const script = "local v = redis.call('INCRBY', KEYS[1], ARGV[1]); redis.call('PEXPIRE', KEYS[1], 60000); return v";
    t.is(await redis.eval(script, 1, key, '5'), 5);
    t.is(await redis.eval(script, 1, key, '7'), 12);
  } finally {
    await redis.del(key);
    redis.disconnect();
  }
});

stackTest('temporal: getSystemInfo answers and TaskId, AccountId, Model are Keyword search attributes', async (t) => {
  const connection = await Connection.connect({ address: env('TEMPORAL_ADDRESS') });
  try {
    const info = await connection.workflowService.getSystemInfo({});
    t.truthy(info.serverVersion);
    const namespace = process.env.TEMPORAL_NAMESPACE || 'default';
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    const custom = listed.customAttributes ?? {};
    const KEYWORD = 2; // temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
    for (const name of ['TaskId', 'AccountId', 'Model']) {
      t.is(custom[name], KEYWORD, `${name} should be a Keyword search attribute`);
    }
  } finally {
    await connection.close();
  }
});
