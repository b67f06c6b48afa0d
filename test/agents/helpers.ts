// Shared helpers for the agent tests (not a test file itself).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir } from '../../dev/scripts/lib/scratch';
import { randomBytes } from 'node:crypto';
import { startGateway, type TestGateway } from '../helpers/stack';
import { readCatalogueFile } from '../../capabilities/catalogue/records';
import type { PageDoc } from '../../capabilities/knowledge/store';

/** A chat model whose first tier has three channels of equal priority (affinity and spreading), and no vision. */
export const SPREAD_MODEL = 'agent-spread';
export const SPREAD_CHANNELS = ['agent-a', 'agent-b', 'agent-c'];

/** The shipped catalogue plus SPREAD_MODEL, written to a temporary file. */
export function agentCatalogueFile(): string {
  const file = readCatalogueFile('data/catalogue.json') as any;
  file.models.push({
    id: SPREAD_MODEL, owned_by: 'qwen', family: 'qwen', endpoint_type: 'chat', capabilities: ['tools', 'json'],
    context_window: 128000, default_max_tokens: 4096, aliases: [],
    pricing: { input_per_1m: 1, output_per_1m: 2, cached_per_1m: 0.1 },
    channels: {
      'chat-completions': [
        ...SPREAD_CHANNELS.map((id) => ({ id, kind: 'native', upstream: 'chat-completions', base_url: `\${SIMULATOR_URL}/ch/${id}`, api_key_env: 'UPSTREAM_API_KEY', priority: 0, weight: 1 })),
        { id: 'agent-z', kind: 'native', upstream: 'chat-completions', base_url: '${SIMULATOR_URL}/ch/agent-z', api_key_env: 'UPSTREAM_API_KEY', priority: 1, weight: 1 },
      ],
    },
  });
  const dir = scratchDir('agents-cat');
  const path = join(dir, 'catalogue.json');
  writeFileSync(path, JSON.stringify(file));
  return path;
}

export async function startAgentGateway(overrides: Record<string, string> = {}): Promise<TestGateway> {
  return startGateway({ CATALOGUE_FILE: agentCatalogueFile(), ...overrides }, { simulator: true });
}

export interface Call<T = any> {
  status: number;
  body: T;
}

/** A management call, as the operator or on behalf of a user (X-Acting-User). */
export async function adminAs<T = any>(gw: TestGateway, userId: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Call<T>> {
  const res = await fetch(`${gw.url}/admin/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${gw.config.ADMIN_TOKEN}`, 'content-type': 'application/json',
      ...(userId ? { 'x-acting-user': userId } : {}), ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text; // e.g. a plain-text 405
  }
  return { status: res.status, body: parsed as T };
}

export interface Enterprise {
  id: string;
  owner: string;
  admin: string;
  member: string;
  member2: string;
  /** A user of no enterprise. */
  outsider: string;
}

async function newUser(gw: TestGateway, name: string): Promise<string> {
  const r = await gw.admin('POST', '/users', { email: `${name}-${randomBytes(4).toString('hex')}@example.com`, name });
  if (r.status !== 201) throw new Error(`user not created: ${JSON.stringify(r.body)}`);
  return r.body.id;
}

/** An enterprise with an owner, an admin, two members and an outsider. */
export async function newEnterprise(gw: TestGateway): Promise<Enterprise> {
  const ent = await gw.newAccount({ name: 'Acme', enterprise: true });
  const [owner, admin, member, member2, outsider] = await Promise.all(['owner', 'admin', 'member', 'member2', 'outsider'].map((n) => newUser(gw, n)));
  for (const [user, role] of [[owner, 'owner'], [admin, 'admin'], [member, 'member'], [member2, 'member']] as const) {
    const r = await gw.admin('PUT', `/accounts/${ent.id}/members`, { user_id: user, role });
    if (r.status !== 200) throw new Error(`member not set: ${JSON.stringify(r.body)}`);
  }
  return { id: ent.id, owner, admin, member, member2, outsider };
}

export interface SeedPage {
  id: string;
  title: string;
  summary?: string;
  body: string;
  tags?: string[];
}

/**
 * A team base of the enterprise with these pages live (one document, one build), readable by `readers`;
 * with `kind: 'personal'` and `kbId` `default`, an account's own base (a person's, or an enterprise's).
 */
export async function seedTeamBase(gw: TestGateway, enterpriseId: string, kbId: string, pages: SeedPage[], readers: 'all' | string[] = 'all', kind: 'team' | 'personal' = 'team'): Promise<void> {
  const { db } = gw.deps;
  const now = new Date();
  await db.Kb.create({
    _id: `${enterpriseId}/${kbId}`, account_id: enterpriseId, kb_id: kbId, name: kbId, kind, readers,
    compiler: 'rules', compiler_model: null, deleted_at: null, created_at: now,
  });
  const documentId = `doc_${randomBytes(6).toString('hex')}`;
  const buildId = `build_${randomBytes(6).toString('hex')}`;
  const docs: PageDoc[] = pages.map((p) => ({
    _id: `${buildId}:${p.id}`, page_id: p.id, account_id: enterpriseId, kb_id: kbId, document_id: documentId, build_id: buildId,
    title: p.title, summary: p.summary ?? '', tags: p.tags ?? [], aliases: [], links: [], body: p.body, confidence: 0.9,
    needs_review: false, source: { r2_key: `kb/${documentId}`, filename: 'handbook.md', locator: p.id, compiled_at: now.toISOString(), model: 'rules' },
    outgoing_links: [], created_at: now,
  }));
  await db.Page.insertMany(docs);
  await db.KbDocument.create({
    _id: documentId, account_id: enterpriseId, kb_id: kbId, filename: 'handbook.md', content_type: 'text/markdown',
    content_hash: randomBytes(8).toString('hex'), r2_key: `kb/${documentId}`, size: 1, live_build_id: buildId, deleted_at: null,
    created_at: now, updated_at: now,
  });
  await gw.deps.pages.bumpVersion({ account_id: enterpriseId, kb_id: kbId });
  // The base was written behind the services' back: say so, as KbBases.create does, so cached scopes are dropped.
  await gw.deps.kbScope.changed();
}

/** Requests the simulator logged on a channel, oldest first. */
export async function upstreamRequests(gw: TestGateway, channel: string): Promise<Array<{ body: any; headers: Record<string, string> }>> {
  return (await gw.control('GET', `/requests?channel=${channel}`)).requests;
}

export async function clearUpstream(gw: TestGateway): Promise<void> {
  await gw.control('DELETE', '/requests');
}

/** Which channels got requests, and how many each (after a clear). */
export async function channelCounts(gw: TestGateway, channels: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const c of channels) out[c] = (await gw.control('GET', `/requests?channel=${c}`)).count;
  return out;
}

/** An agent published on the enterprise, made by its owner. */
export async function newAgent(gw: TestGateway, ent: Enterprise, fields: Record<string, unknown> = {}): Promise<any> {
  const r = await adminAs(gw, ent.owner, 'POST', `/accounts/${ent.id}/agents`, { name: 'Helper', system_prompt: 'You are Acme helper.', published: true, ...fields });
  if (r.status !== 201) throw new Error(`agent not created: ${JSON.stringify(r.body)}`);
  return r.body;
}

/** A key issued directly by the enterprise's admin; returns the record with its plaintext `key`. */
export async function issueKey(gw: TestGateway, ent: Enterprise, agentId: string, fields: Record<string, unknown> = {}): Promise<any> {
  const r = await adminAs(gw, ent.admin, 'POST', `/agents/${agentId}/keys`, { name: 'direct', ...fields });
  if (r.status !== 201) throw new Error(`key not issued: ${JSON.stringify(r.body)}`);
  return r.body;
}
