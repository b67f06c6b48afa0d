import { startGateway, type TestGateway } from '../helpers/stack';
import { parseCredits } from '../../domain/money';
import type { TaskDocument } from '../../domain/media/task';

/** Shared by the videos*.test.ts files: one gateway per file, HTTP helpers, exact money reads. */
export const GRANT = parseCredits('40.44');
export const credits = (v: string | number) => parseCredits(v);
const FINAL = new Set(['succeeded', 'failed', 'expired', 'cancelled']);

export interface Kit {
  gw: TestGateway;
  post(key: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  get(key: string, path: string): Promise<Response>;
  account(fields?: Record<string, unknown>): Promise<{ id: string; key: string }>;
  /** Submit and expect 200; the submit body. */
  submit(key: string, body: unknown): Promise<{ id: string; status: string; model: string; created_at: number }>;
  /** Poll `GET /v1/videos/generations/{id}` until a final status. */
  final(key: string, id: string): Promise<Record<string, any>>;
  task(id: string): Promise<TaskDocument>;
  balance(accountId: string): Promise<number>;
  /** The bodies the simulator received on a channel, oldest first. */
  upstreamBodies(channel: string): Promise<Array<Record<string, any>>>;
  fault(channel: string, fault: Record<string, unknown>, times?: number): Promise<void>;
}

export async function startKit(): Promise<Kit> {
  const gw = await startGateway({}, { simulator: true, worker: true, mediaDelayMs: 0 });
  const get = (key: string, path: string) => fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const post = (key: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gw.url}/v1/videos/generations`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
    });
  const kit: Kit = {
    gw, get, post,
    async account(fields = {}) {
      const a = await gw.newAccount();
      return { id: a.id, key: (await gw.newKey(a.id, fields)).key };
    },
    async submit(key, body) {
      const r = await post(key, body);
      const text = await r.text();
      if (r.status !== 200) throw new Error(`submit answered ${r.status}: ${text}`);
      return JSON.parse(text);
    },
    async final(key, id) {
      for (let i = 0; i < 300; i++) {
        const body = (await (await get(key, `/v1/videos/generations/${id}`)).json()) as Record<string, any>;
        if (FINAL.has(body.status)) return body;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`task ${id} did not finish`);
    },
    async task(id) {
      return (await gw.deps.db.Task.findById(id).lean<TaskDocument>())!;
    },
    balance: (accountId) => gw.deps.wallet.balance(accountId),
    async upstreamBodies(channel) {
      const r = await gw.control('GET', `/media/tasks?channel=${channel}`);
      return (r.tasks as Array<{ body: Record<string, any> }>).map((x) => x.body);
    },
    async fault(channel, fault, times) {
      await gw.control('POST', '/media/faults', { channel, fault, ...(times === undefined ? {} : { times }) });
    },
  };
  return kit;
}

/** A valid Ark-family body. */
export const textVideo = (model = 'seedance-1-0-pro', extra: Record<string, unknown> = {}) => ({
  model, content: [{ type: 'text', text: 'a cat surfing a wave at sunset' }], ...extra,
});

/** A task document written directly (an avatar or a cloned voice made by another family's endpoint). */
export async function insertTask(k: Kit, fields: { _id: string; account_id: string; kind: string; endpoint: string; state: string; extra?: Record<string, unknown>; channel?: string }) {
  const now = new Date();
  await k.gw.deps.db.Task.create({
    _id: fields._id, account_id: fields.account_id, key_id: 'k', key_name: 'k', key_prefix: 'sk', kind: fields.kind, endpoint: fields.endpoint,
    model: fields.kind === 'avatar' ? 'dh-avatar-create' : 'voice-clone', state: fields.state, progress: null, input: { name: 'x' },
    quote: { unitType: 'creation', unitNano: 0, fixedNano: 0, reservedUnits: 1 }, reserved_nano: 0, cost_nano: 0, unit_count: 0,
    upstream: fields.channel ? { channel: fields.channel, task_id: 'dht_x', attempts: 1 } : null,
    result: fields.state === 'succeeded' ? { urls: [], expires_at: null, links_expired: false, extra: fields.extra ?? null } : null,
    final_body: null, final_status: null, error_code: null, error_message: null, request_id: 'r',
    created_at: now, started_at: null, completed_at: null, updated_at: now,
  });
}
