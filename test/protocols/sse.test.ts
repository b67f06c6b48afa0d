import test from 'ava';
import { formatSse, SseParser } from '../../protocols/sse';

test('parses events with event names, split across chunks at any byte', (t) => {
  const body =
    'event: message_start\ndata: {"type":"message_start"}\n\n' +
    'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"héllo"}}\n\n';
  const bytes = Buffer.from(body, 'utf8');
  for (let cut = 1; cut < bytes.length; cut++) {
    const p = new SseParser();
    const events = [...p.push(bytes.subarray(0, cut)), ...p.push(bytes.subarray(cut)), ...p.end()];
    t.deepEqual(events, [
      { event: 'message_start', data: '{"type":"message_start"}' },
      { event: 'content_block_delta', data: '{"type":"content_block_delta","delta":{"text":"héllo"}}' },
    ]);
  }
});

test('handles \\r\\n and bare \\r line ends, including a \\r\\n split between chunks', (t) => {
  const p = new SseParser();
  const a = p.push('data: {"a":1}\r');
  const b = p.push('\n\r\ndata: {"b":2}\r\rdata: [DONE]\r\n');
  const c = p.push('\r\n');
  t.deepEqual([...a, ...b, ...c], [{ data: '{"a":1}' }, { data: '{"b":2}' }, { data: '[DONE]' }]);
});

test('joins multi-line data with \\n, ignores comments, id and retry, and a leading BOM', (t) => {
  const p = new SseParser();
  const events = p.push('\uFEFF: keep-alive\nid: 7\nretry: 100\ndata: line one\ndata:line two\ndata\n\n');
  t.deepEqual(events, [{ data: 'line one\nline two\n' }]);
});

test('an event with no data is not dispatched; its event name does not leak into the next', (t) => {
  const p = new SseParser();
  t.deepEqual(p.push('event: ping\n\ndata: x\n\n'), [{ data: 'x' }]);
});

test('end() dispatches a final event that lacks its blank line', (t) => {
  const p = new SseParser();
  t.deepEqual(p.push('data: {"x":1}\n\ndata: [DONE]'), [{ data: '{"x":1}' }]);
  t.deepEqual(p.end(), [{ data: '[DONE]' }]);
});

test('Gemini-style \\r\\n\\r\\n separated frames', (t) => {
  const p = new SseParser();
  const events = p.push('data: {"candidates":[]}\r\n\r\ndata: {"usageMetadata":{}}\r\n\r\n');
  t.deepEqual(events.map((e) => e.data), ['{"candidates":[]}', '{"usageMetadata":{}}']);
});

test('formatSse writes event and data lines, splitting multi-line data', (t) => {
  t.is(formatSse({ type: 'ping' }, 'ping'), 'event: ping\ndata: {"type":"ping"}\n\n');
  t.is(formatSse('[DONE]'), 'data: [DONE]\n\n');
  t.is(formatSse('a\nb'), 'data: a\ndata: b\n\n');
  const p = new SseParser();
  t.deepEqual(p.push(formatSse('a\nb', 'x')), [{ event: 'x', data: 'a\nb' }]);
});

/** The event-stream rules on the whole text at once (what the incremental parser must give, however it is cut). */
function reference(text: string): Array<{ event?: string; data: string }> {
  const out: Array<{ event?: string; data: string }> = [];
  let data: string[] = [];
  let event: string | undefined;
  const dispatch = () => {
    if (data.length) out.push(event ? { event, data: data.join('\n') } : { data: data.join('\n') });
    data = [];
    event = undefined;
  };
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const lines = body.split(/\r\n|\r|\n/);
  const last = lines.pop()!; // after the last line end: an unterminated line, handled as end() does
  for (const line of [...lines, ...(last ? [last] : [])]) {
    if (line === '') dispatch();
    else if (line[0] !== ':') {
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value[0] === ' ') value = value.slice(1);
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
    }
  }
  dispatch();
  return out;
}

test('any stream, any line ends, cut anywhere: the events of the whole text', async (t) => {
  const fc = (await import('fast-check')).default;
  const value = fc.oneof(fc.string(), fc.constantFrom('{"choices":[{"delta":{"content":"é😀"}}]}', '[DONE]', ' lead', ':colon', ''));
  const line = fc.oneof(
    value.map((v) => `data: ${v.replace(/[\r\n]/g, ' ')}`),
    fc.constantFrom('event: message_delta', ': comment', 'id: 7', 'retry: 10', 'data', 'data:x', ''),
  );
  const stream = fc.tuple(fc.array(line, { maxLength: 14 }), fc.array(fc.constantFrom('\n', '\r\n', '\r'), { minLength: 1, maxLength: 14 }), fc.boolean(), fc.boolean());
  fc.assert(
    fc.property(stream, fc.array(fc.nat(), { maxLength: 6 }), ([lines, ends, bom, terminated], cuts) => {
      let text = (bom ? '\ufeff' : '') + lines.map((l, i) => l + ends[i % ends.length]).join('');
      if (terminated) text += '\n\n';
      const bytes = Buffer.from(text, 'utf8');
      const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
      const p = new SseParser();
      const got: unknown[] = [];
      let prev = 0;
      for (const c of [...at, bytes.length]) {
        got.push(...p.push(bytes.subarray(prev, c)));
        prev = c;
      }
      got.push(...p.end());
      return JSON.stringify(got) === JSON.stringify(reference(text));
    }),
    { numRuns: 4000 },
  );
  t.pass();
});
