import { startGateway, type TestGateway } from '../helpers/stack';
import { parseCredits } from '../../domain/money';
import type { LedgerDoc } from '../../capabilities/accounts/store';
import type { TaskDocument } from '../../domain/media/task';

/** Shared by the images-*.test.ts files: one gateway per file, HTTP helpers, exact money reads. */
export const GRANT = parseCredits('40.44');
export const credits = (v: string | number) => parseCredits(v);

/** A real 1x1 PNG. */
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
export const PNG_URI = `data:image/png;base64,${PNG.toString('base64')}`;

export interface SimTask {
  id: string;
  path: string;
  model: string;
  body: Record<string, any>;
  headers: Record<string, string>;
}

export interface Kit {
  gw: TestGateway;
  post(key: string, path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  form(key: string, path: string, form: FormData, headers?: Record<string, string>): Promise<Response>;
  get(key: string, path: string): Promise<Response>;
  account(): Promise<{ id: string; key: string }>;
  /** Poll `GET {path}/{id}` until it stops answering 202. */
  final(key: string, id: string, path?: string): Promise<Response>;
  task(id: string): Promise<TaskDocument>;
  /** Tasks of an account, newest first. */
  tasksOf(accountId: string): Promise<TaskDocument[]>;
  ledger(taskId: string): Promise<{ reserve: number; settle: number }>;
  balance(accountId: string): Promise<number>;
  /** Submissions the simulator accepted on a channel, oldest first. */
  upstream(channel: string): Promise<SimTask[]>;
  fault(channel: string, fault: Record<string, unknown>, times?: number): Promise<void>;
  /** Take the account's balance down to `left` credits. */
  drain(accountId: string, left: string): Promise<void>;
}

export async function startKit(overrides: Record<string, string> = {}): Promise<Kit> {
  const gw = await startGateway(overrides, { simulator: true, worker: true, mediaDelayMs: 0 });
  const auth = (key: string) => ({ authorization: `Bearer ${key}` });
  const get = (key: string, path: string) => fetch(`${gw.url}${path}`, { headers: auth(key) });
  const kit: Kit = {
    gw, get,
    post: (key, path, body, headers = {}) =>
      fetch(`${gw.url}${path}`, { method: 'POST', headers: { ...auth(key), 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }),
    form: (key, path, form, headers = {}) => fetch(`${gw.url}${path}`, { method: 'POST', headers: { ...auth(key), ...headers }, body: form }),
    async account() {
      const a = await gw.newAccount();
      return { id: a.id, key: (await gw.newKey(a.id)).key };
    },
    async final(key, id, path = '/v1/images/generations') {
      for (let i = 0; i < 400; i++) {
        const r = await get(key, `${path}/${id}`);
        if (r.status !== 202) return r;
        await r.body?.cancel();
        await new Promise((res) => setTimeout(res, 50));
      }
      throw new Error(`task ${id} did not finish`);
    },
    async task(id) {
      return (await gw.deps.db.Task.findById(id).lean<TaskDocument>())!;
    },
    async tasksOf(accountId) {
      return gw.deps.db.Task.find({ account_id: accountId }).sort({ created_at: -1 }).lean<TaskDocument[]>();
    },
    async ledger(taskId) {
      await gw.deps.wallet.journal.flush(); // holds and settlements are written ahead, drained in batches
      const rows = await gw.deps.db.Ledger.find({ ref: taskId }).lean<LedgerDoc[]>();
      const of = (id: string) => rows.find((r) => r._id === id)?.amount_nano ?? NaN;
      return { reserve: of(`${taskId}:reserve`), settle: of(`${taskId}:settle`) };
    },
    balance: (accountId) => gw.deps.wallet.balance(accountId),
    async upstream(channel) {
      const r = await gw.control('GET', `/media/tasks?channel=${channel}`);
      return (r.tasks as SimTask[]).sort((a, b) => Number(a.id.replace(/\D/g, '')) - Number(b.id.replace(/\D/g, '')));
    },
    async fault(channel, fault, times) {
      const r = await gw.control('POST', '/media/faults', { channel, fault, ...(times === undefined ? {} : { times }) });
      if (r?.error || r?.issues) throw new Error(`fault not armed: ${JSON.stringify(r)}`);
    },
    async drain(accountId, left) {
      const now = await gw.deps.wallet.balance(accountId);
      await gw.deps.wallet.apply({ opId: `${accountId}:drain:${left}`, accountId, kind: 'adjust', amountNano: parseCredits(left) - now });
    },
  };
  return kit;
}

/** The task id the gateway assigned to the newest task of an account. */
export async function newestTask(kit: Kit, accountId: string): Promise<TaskDocument> {
  const [doc] = await kit.tasksOf(accountId);
  if (!doc) throw new Error('no task');
  return doc;
}
