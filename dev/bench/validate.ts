/** Request validation cost per body (runs on every chat request): npx tsx dev/bench/validate.ts */
import { parseRequest } from '../../protocols';

const visionChat = {
  model: 'gpt-5.1',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } }] },
  ],
  max_tokens: 100,
  temperature: 0.2,
};
const plain = { model: 'gpt-5.1', messages: [{ role: 'user', content: 'Hello' }] };
for (const [name, body] of [['plain chat', plain], ['vision chat', visionChat]] as const) {
  for (let i = 0; i < 5_000; i++) parseRequest('chat-completions', body);
  const n = 50_000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) parseRequest('chat-completions', body);
  console.log(`${name.padEnd(12)} ${(((performance.now() - t0) / n) * 1000).toFixed(2)} µs per body`);
}
