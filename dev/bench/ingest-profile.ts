/**
 * Where a knowledge build's time goes: the generated 7.8 MB collection
 * (dev/bench/lib/abstracts.ts) built document by document through the build
 * steps themselves (capabilities/knowledge/publish.ts: compileBuild then publishBuild),
 * in this process, against real FerretDB and Redis started on free ports,
 * with each step's wall time summed over the documents.
 *
 *   npx tsx dev/bench/ingest-profile.ts [documents=10]
 *   node --cpu-prof --cpu-prof-dir=.data/profiles --import tsx dev/bench/ingest-profile.ts
 */
import { createHash, randomBytes } from 'node:crypto';
import { benchServices } from './lib/stack';
import { generateCorpus } from './lib/abstracts';
import { connectStore } from '../../capabilities/store';
import type { KbBuildDoc } from '../../capabilities/knowledge/store';
import { connectRedis } from '../../platform/redis';
import { createLogger } from '../../platform/logger';
import { PageStore } from '../../capabilities/knowledge/page-store';
import { MongoFileStore } from '../../capabilities/knowledge/storage/mongo-file-store';
import { compileBuild, publishBuild, type BuildDeps } from '../../capabilities/knowledge/publish';
import { RulesCompiler } from '../../capabilities/knowledge/compiler';
import { documentIdOf } from '../../capabilities/knowledge/ingestion';

const DOCS = Number(process.argv[2] ?? 10);
const { services } = await benchServices('ingest-profile');
const db = await connectStore(services.env.MONGO_URL);
const redis = connectRedis(services.env.REDIS_URL, `prof${Date.now()}:`);
const log = createLogger('warn');
const totals = new Map<string, number>();
const deps: BuildDeps = {
  db, redis, log, pages: new PageStore(db, redis), kbFiles: new MongoFileStore(db.KbFile),
  timings: (phase, ms) => {
    totals.set(phase, (totals.get(phase) ?? 0) + ms);
    if (process.env.VERBOSE) console.log(`    ${phase}: ${ms.toFixed(0)} ms`);
  },
};
const rules = new RulesCompiler();
const files = generateCorpus().slice(0, DOCS);
const since = (t: number) => `${((performance.now() - t) / 1000).toFixed(1)} s`;
console.log(`corpus generated; store and Redis up`);
const account = `acct_${randomBytes(4).toString('hex')}`;
const t0 = performance.now();
let pages = 0;
for (const f of files) {
  const data = Buffer.from(f.markdown);
  const hash = createHash('sha256').update(data).digest('hex');
  const documentId = documentIdOf(account, 'default', f.filename);
  const r2 = `kb/${account}/default/${documentId}/${hash.slice(0, 32)}`;
  const now = new Date();
  const u0 = performance.now();
  await deps.kbFiles.put(r2, { data, contentType: 'text/markdown', filename: f.filename });
  if (process.env.VERBOSE) console.log(`    file stored: ${since(u0)}`);
  await db.KbDocument.create({
    _id: documentId, account_id: account, kb_id: 'default', filename: f.filename, content_type: 'text/markdown', content_hash: hash, r2_key: '', size: data.length,
    live_build_id: null, live_seq: 0, deleted_seq: 0, deleted_at: null, created_at: now, updated_at: now,
  });
  const build: KbBuildDoc = {
    _id: `build_${randomBytes(12).toString('hex')}`, doc_seq: `${documentId}#1`, account_id: account, kb_id: 'default', document_id: documentId, seq: 1,
    filename: f.filename, format: 'markdown', content_type: 'text/markdown', content_hash: hash, r2_key: r2, size: data.length, compiler: 'rules', model: 'rules',
    state: 'queued', pages_made: 0, warnings: [], error: null, created_at: now, started_at: null, finished_at: null, updated_at: now,
  };
  await db.KbBuild.create(build);
  const d0 = performance.now();
  const c = await compileBuild(deps, build._id, () => rules);
  const d1 = performance.now();
  const p = await publishBuild(deps, build._id);
  pages += c.pages;
  console.log(`${f.filename}: ${c.pages} pages, compile ${((d1 - d0) / 1000).toFixed(1)} s, publish ${((performance.now() - d1) / 1000).toFixed(1)} s, ${p.state}; rss ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`);
}
const wall = performance.now() - t0;
console.log(`\n${files.length} documents, ${pages} pages in ${(wall / 1000).toFixed(1)} s (${(pages / (wall / 1000)).toFixed(0)} pages/s)`);
for (const [phase, ms] of [...totals].sort((a, b) => b[1] - a[1])) console.log(`  ${phase.padEnd(40)} ${(ms / 1000).toFixed(2).padStart(8)} s  ${((ms / wall) * 100).toFixed(1).padStart(5)} %`);
await db.conn.close();
redis.disconnect();
await services.stop();
process.exit(0);
