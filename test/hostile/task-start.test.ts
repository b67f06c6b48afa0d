import test from 'ava';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Client } from '@temporalio/client';
import type { TestGateway } from '../helpers/stack';
import { createApp } from '../../gateway/app';
import { STATUS_OF, type ErrorCode } from '../../domain/errors';
import { assertShape, send, world } from './kit';

// A workflow start that fails (a slow store, a Temporal hiccup) is retried; when it keeps failing the
// client gets a code of spec 1 section 7 with that code's status, and nothing is charged.

let gw: TestGateway;
let url: string;
let server: Server;
let failuresLeft = 0;
test.before(async () => {
  ({ gw } = await world());
  const real = gw.deps.temporal;
  const workflow = Object.create(real.workflow);
  workflow.start = async (...args: Parameters<Client['workflow']['start']>) => {
    if (failuresLeft > 0) {
      failuresLeft--;
      throw new Error('14 UNAVAILABLE: the store did not answer in time');
    }
    return real.workflow.start(...args);
  };
  const temporal = Object.create(real, { workflow: { value: workflow } }) as Client;
  server = createApp({ ...gw.deps, temporal }).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
test.after.always(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await gw?.close();
});

const SUBMISSIONS: Array<[string, unknown]> = [
  ['/v1/images/generations', { model: 'gpt-image-1', prompt: 'a fox', async: true }],
  ['/v1/videos/generations', { model: 'seedance-1-0-pro', content: [{ type: 'text', text: 'a fox' }] }],
  ['/v1/audio/speech', { model: 'speech-2-5-hd', text: 'hello', voice_id: 'male-qn-qingse' }],
];

test.serial('a start that fails once or twice is retried: the submission succeeds', async (t) => {
  for (const fails of [1, 2]) {
    for (const [path, body] of SUBMISSIONS) {
      const acc = await gw.newAccount();
      const key = (await gw.newKey(acc.id)).key;
      failuresLeft = fails;
      const r = await send(url, 'POST', path, { key, body });
      t.is(r.status, 200, `${path} after ${fails}: ${r.text}`);
      t.is(failuresLeft, 0);
    }
  }
});

test.serial('a start that keeps failing: a code of the spec with its own status, in the shape, nothing charged', async (t) => {
  for (const [path, body] of SUBMISSIONS) {
    const acc = await gw.newAccount();
    const key = (await gw.newKey(acc.id)).key;
    const before = await gw.deps.wallet.balance(acc.id);
    failuresLeft = 100;
    const r = await send(url, 'POST', path, { key, body });
    failuresLeft = 0;
    assertShape(t, r, 'openai', path);
    const code = r.json.error.code as ErrorCode;
    t.true(code in STATUS_OF, code);
    t.is(r.status, STATUS_OF[code], `${path}: ${r.text}`);
    t.not(r.status, 503);
    t.is(await gw.deps.wallet.balance(acc.id), before);
  }
});
