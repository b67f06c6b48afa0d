import test from 'ava';
import { getTranslator } from '../../protocols/translate/registry';
import { PROTOCOLS } from '../../protocols/types';

test('exactly the five translations of spec 1 section 4.10 exist', (t) => {
  const found: string[] = [];
  for (const client of PROTOCOLS) for (const upstream of PROTOCOLS) if (getTranslator(client, upstream)) found.push(`${client}_to_${upstream}`);
  t.deepEqual(found.sort(), [
    'chat-completions_to_generate-content',
    'chat-completions_to_messages',
    'generate-content_to_chat-completions',
    'generate-content_to_messages',
    'messages_to_chat-completions',
  ]);
  for (const name of found) {
    const [client, upstream] = name.split('_to_') as [typeof PROTOCOLS[number], typeof PROTOCOLS[number]];
    t.is(getTranslator(client, upstream)!.name, name);
  }
});

test('no translator for the responses protocol or for a protocol to itself', (t) => {
  t.is(getTranslator('responses', 'chat-completions'), undefined);
  t.is(getTranslator('chat-completions', 'responses'), undefined);
  t.is(getTranslator('messages', 'messages'), undefined);
});

test('each stream call gives an independent translator', (t) => {
  const tr = getTranslator('chat-completions', 'messages')!;
  const a = tr.stream();
  const b = tr.stream();
  a.push({ event: 'message_start', data: '{"type":"message_start","message":{"id":"msg_a","model":"m","usage":{}}}' });
  const step = b.push({ event: 'message_start', data: '{"type":"message_start","message":{"id":"msg_b","model":"m","usage":{}}}' });
  t.is(JSON.parse(step.frames[0].slice(6)).id, 'msg_b');
});
