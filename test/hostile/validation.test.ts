import test from 'ava';
import { z } from 'zod';
import { GatewayError } from '../../domain/errors';
import { parseInput } from '../../domain/validation';
import { InstantString } from '../../domain/instant';
import { parseRequest } from '../../protocols';

// One validation path for body, query and params (domain/validation.ts): one 400 `invalid_request`,
// the message names the field, `param` is its dotted path; a missing field reads "x is required".

const refusal = (fn: () => unknown): GatewayError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('not refused');
};

const Body = z.object({ name: z.string().min(1), items: z.array(z.object({ url: z.string() })).optional(), n: z.number().int().max(10).optional() });

test('body, query and params fail the same way, naming the field', (t) => {
  const missing = refusal(() => parseInput('body', Body, {}));
  t.like(missing, { code: 'invalid_request', status: 400, param: 'name', message: 'name is required' });
  const nested = refusal(() => parseInput('body', Body, { name: 'x', items: [{ url: 'a' }, { url: 5 }] }));
  t.is(nested.param, 'items.1.url');
  t.regex(nested.message, /^items\[1\]\.url: /);
  const over = refusal(() => parseInput('body', Body, { name: 'x', n: 11 }));
  t.is(over.param, 'n');
  const q = refusal(() => parseInput('query', z.object({ from: InstantString.optional() }), { from: 'yesterday' }));
  t.like(q, { code: 'invalid_request', status: 400, param: 'from' });
  t.regex(q.message, /^from: must be Unix seconds, RFC 3339 or YYYY-MM-DD/);
  const p = refusal(() => parseInput('params', z.object({ id: z.string().regex(/^task_/) }), { id: 'x' }));
  t.is(p.param, 'id');
  const whole = refusal(() => parseInput('body', Body, 'a string'));
  t.is(whole.param, undefined);
  t.is(whole.code, 'invalid_request');
});

test('the chat protocols use the same path: a missing field reads the same', (t) => {
  const err = refusal(() => parseRequest('messages', { model: 'c', messages: [{ role: 'user', content: 'hi' }] }));
  t.like(err, { code: 'invalid_request', param: 'max_tokens', message: 'max_tokens is required' });
  const chat = refusal(() => parseRequest('chat-completions', { messages: [{ role: 'user', content: 'hi' }] }));
  t.like(chat, { param: 'model', message: 'model is required' });
});
