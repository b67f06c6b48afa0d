// Shared helpers for the simulator tests (not a test file itself).
import { createSimulator, type Simulator } from '../../dev/simulator/app';

export async function startSim(): Promise<{ sim: Simulator; url: string }> {
  const sim = createSimulator();
  const url = await sim.listen(0);
  return { sim, url };
}

let n = 0;
/** A fresh channel name per test, so concurrent tests never share faults or logs. */
export function channel(prefix = 't'): string {
  return `${prefix}-${process.pid}-${++n}`;
}

export async function control(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(url + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : null };
}

export async function addFault(url: string, ch: string, fault: unknown, times?: number): Promise<void> {
  const r = await control(url, 'POST', '/_control/faults', { channel: ch, fault, times });
  if (r.status !== 200) throw new Error(`fault not set: ${JSON.stringify(r.json)}`);
}

export async function setUsage(url: string, ch: string, usage: Record<string, number>): Promise<void> {
  const r = await control(url, 'POST', '/_control/usage', { channel: ch, usage });
  if (r.status !== 200) throw new Error(`usage not set: ${JSON.stringify(r.json)}`);
}

export async function requests(url: string, ch: string): Promise<{ count: number; requests: any[] }> {
  return (await control(url, 'GET', `/_control/requests?channel=${encodeURIComponent(ch)}`)).json;
}

export interface SseEvent {
  event: string | null;
  data: string;
}

/** Parse an SSE body strictly: frames separated by a blank line (\n\n or \r\n\r\n). */
export function parseSse(body: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const block of body.split(/\r?\n\r?\n/)) {
    if (block === '') continue;
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
      else throw new Error(`unexpected SSE line: ${JSON.stringify(line)}`);
    }
    out.push({ event, data: data.join('\n') });
  }
  return out;
}

export async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export const OPENAI_AUTH = { authorization: 'Bearer sk-test' };
export const ANTHROPIC_AUTH = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };
export const GEMINI_AUTH = { 'x-goog-api-key': 'AIza-test' };

export const WEATHER_SCHEMA = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer' },
  },
  required: ['city', 'unit'],
};

export async function jsonOf(r: Response): Promise<any> {
  return r.json();
}
