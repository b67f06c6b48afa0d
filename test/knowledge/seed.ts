import { randomBytes } from 'node:crypto';
import type { ServiceDeps } from '../../capabilities/bootstrap';

/**
 * Pages written through the reader contract (platform/mongo.ts, capabilities/knowledge/page-store.ts):
 * a document, its pages under one build, then the document's `live_build_id`
 * pointed at that build and the base's version bumped, as a finished build does.
 */
export interface SeedPage {
  id: string;
  title: string;
  body: string;
  summary?: string;
  tags?: string[];
  aliases?: string[];
  links?: string[];
}

export async function seedDocument(
  deps: ServiceDeps,
  accountId: string,
  kbId: string,
  pages: SeedPage[],
  opts: { documentId?: string; filename?: string } = {},
): Promise<{ documentId: string; buildId: string }> {
  const documentId = opts.documentId ?? `doc_${randomBytes(6).toString('hex')}`;
  const buildId = `kbb_${randomBytes(8).toString('hex')}`;
  const filename = opts.filename ?? `${documentId}.md`;
  const r2Key = `kb/${accountId}/${kbId}/${documentId}`;
  const now = new Date();
  await deps.kbFiles.put(r2Key, { data: Buffer.from(pages.map((p) => `# ${p.title}\n\n${p.body}`).join('\n\n')), contentType: 'text/markdown', filename });
  const existing = await deps.db.KbDocument.findById(documentId).lean();
  if (!existing) {
    await deps.db.KbDocument.create({
      _id: documentId, account_id: accountId, kb_id: kbId, filename, content_type: 'text/markdown',
      content_hash: randomBytes(32).toString('hex'), r2_key: r2Key, size: 1, live_build_id: null, deleted_at: null,
      created_at: now, updated_at: now,
    });
  }
  const titles = new Map(pages.map((p) => [p.id, p.title]));
  await deps.db.Page.insertMany(pages.map((p) => ({
    _id: `${buildId}:${p.id}`, page_id: p.id, account_id: accountId, kb_id: kbId, document_id: documentId, build_id: buildId,
    title: p.title, summary: p.summary ?? '', tags: p.tags ?? [], aliases: p.aliases ?? [], links: p.links ?? [], body: p.body,
    confidence: 0.9, needs_review: false,
    source: { r2_key: r2Key, filename, locator: `# ${p.title}`, compiled_at: now.toISOString(), model: 'rules' },
    outgoing_links: (p.links ?? []).map((id) => ({ id, resolved: true, title: titles.get(id) ?? id })),
    created_at: now,
  })));
  await deps.db.KbDocument.updateOne({ _id: documentId }, { $set: { live_build_id: buildId, updated_at: now } });
  await deps.pages.bumpVersion({ account_id: accountId, kb_id: kbId });
  return { documentId, buildId };
}

/** A team base of an enterprise account, readable by `readers`. */
export async function seedTeamBase(deps: ServiceDeps, enterpriseId: string, kbId: string, readers: 'all' | string[] = 'all'): Promise<void> {
  await deps.db.Kb.create({
    _id: `${enterpriseId}/${kbId}`, account_id: enterpriseId, kb_id: kbId, name: `Team ${kbId}`, kind: 'team', readers,
    compiler: 'rules', compiler_model: null, deleted_at: null, created_at: new Date(),
  });
  // As the bases service does: scopes cached by version see the new base (capabilities/knowledge/scope.ts).
  await deps.kbScope.changed();
}
