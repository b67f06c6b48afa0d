/**
 * Search memory: the gateway heap the search caches hold, in the shape of an
 * outside audit's repro. An enterprise scope of two team bases of about 8 MB
 * of text each (pages made like dev/bench/search-speed.ts from the Cranfield
 * abstracts) plus the searcher's personal base; then eight times "one small
 * page added to the first team base (its version moves), one search over the
 * scope"; then five new members, each with a personal base of a few pages (a
 * scope of its own), one search each. After each step: the V8 heap in use
 * and its typed arrays' buffers after a full collection, and the wall time of that first search. Runs the
 * services directly (Retrieval over a CorpusCache with an in-memory page
 * store), so the figures are the caches' own and not the rest of a gateway.
 *
 *   node --expose-gc --import tsx dev/bench/search-memory.ts [pagesPerBase=4150] [budgetMB=256]
 */
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import type { PageDoc } from '../../capabilities/knowledge/store';
import { CorpusCache } from '../../capabilities/knowledge/corpus';
import { Retrieval } from '../../capabilities/knowledge/retrieval';
import { baseKey, type BaseRef, type PageStore } from '../../capabilities/knowledge/page-store';

const PAGES = Number(process.argv[2] ?? 4150);
const BUDGET_MB = Number(process.argv[3] ?? 256);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc --import tsx');

const here = path.dirname(fileURLToPath(import.meta.url));
const read = (f: string) => gunzipSync(fs.readFileSync(path.join(here, 'data', 'cranfield', f))).toString('utf8');
const field = (chunk: string, f: string) => (new RegExp(`^\\.${f}\\s*\\n([\\s\\S]*?)(?=^\\.[A-Z]\\s*$|(?![\\s\\S]))`, 'm').exec(chunk)?.[1] ?? '').replace(/\s+/g, ' ').trim();
const abstracts = read('cran.all.1400.gz').split(/^\.I\s+/m).slice(1).map((c) => ({ title: field(c, 'T'), body: field(c, 'W') }));
let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
const sentences = abstracts.flatMap((a) => a.body.split(/(?<=\.)\s+/).filter((s) => s.length > 20));

function pagesOf(kb: string, n: number, tag = ''): PageDoc[] {
  return Array.from({ length: n }, (_, i) => {
    const a = pick(abstracts);
    const paras = Array.from({ length: 2 + Math.floor(rand() * 4) }, () => Array.from({ length: 2 + Math.floor(rand() * 4) }, () => pick(sentences)).join(' '));
    return {
      _id: `${kb}:${tag}${i}`, page_id: `pg_${tag}${i}`, account_id: 'ent', kb_id: kb, document_id: `doc_${i % 200}`, build_id: 'b',
      title: `${a.title} (${i})`, summary: paras[0].slice(0, 200), tags: a.title.split(' ').filter((w) => w.length > 5).slice(0, 3), aliases: [], links: [],
      body: `# ${a.title}\n\n${paras.join('\n\n')}`, confidence: 0.9, needs_review: false,
      source: { r2_key: 'k', filename: 'f.md', locator: '#', compiled_at: '', model: 'rules' }, outgoing_links: [], created_at: new Date(),
    };
  });
}

// The page store, in memory: each base's live pages and version. A load hands out fresh copies (as Mongo does).
const bases = new Map<string, { version: number; docs: PageDoc[] }>();
const store = {
  version: async (ref: BaseRef) => bases.get(baseKey(ref))?.version ?? 0,
  livePages: async (ref: BaseRef) => structuredClone(bases.get(baseKey(ref))?.docs ?? []),
} as unknown as PageStore;
const put = (ref: BaseRef, docs: PageDoc[]) => bases.set(baseKey(ref), { version: (bases.get(baseKey(ref))?.version ?? 0) + 1, docs });

const teamA = { account_id: 'ent', kb_id: 'kb_a' };
const teamB = { account_id: 'ent', kb_id: 'kb_b' };
const own = { account_id: 'ent', kb_id: 'default' };
put(teamA, pagesOf('kb_a', PAGES));
put(teamB, pagesOf('kb_b', PAGES));
put(own, pagesOf('default', 3));
const mb = (docs: PageDoc[]) => docs.reduce((s, d) => s + d.body.length + d.title.length + d.summary.length, 0) / 1e6;

const corpora = new CorpusCache(store, { budgetBytes: BUDGET_MB * 2 ** 20 });
const retrieval = new Retrieval(corpora);
/** V8 heap in use plus the typed arrays' buffers (outside the heap), in MB, after full collections. */
const heap = () => {
  gc!();
  gc!();
  const m = process.memoryUsage();
  return (m.heapUsed + m.arrayBuffers) / 2 ** 20;
};
async function step(name: string, scope: BaseRef[]) {
  const t0 = performance.now();
  const r = await retrieval.search(scope, 'boundary layer flow over a flat plate', { limit: 10, offset: 0 });
  const ms = performance.now() - t0;
  console.log(`${name.padEnd(34)} first search ${ms.toFixed(0).padStart(5)} ms, total_hits ${String(r.total).padStart(5)}; heap + buffers after gc ${heap().toFixed(0)} MB; cache's estimate ${(corpora.bytes / 2 ** 20).toFixed(0)} MB`);
}

const start = heap();
console.log(`two team bases of ${PAGES} pages (${mb(bases.get(baseKey(teamA))!.docs).toFixed(1)} + ${mb(bases.get(baseKey(teamB))!.docs).toFixed(1)} MB of text); heap + buffers at start ${start.toFixed(0)} MB`);
const scope = [own, teamA, teamB];
await step('scope searched', scope);
for (let i = 1; i <= 8; i++) {
  put(teamA, [...bases.get(baseKey(teamA))!.docs, ...pagesOf('kb_a', 1, `new${i}_`)]);
  await step(`after publish ${i}`, scope);
}
for (let m = 1; m <= 5; m++) {
  const personal = { account_id: `member${m}`, kb_id: 'default' };
  put(personal, pagesOf('default', 3, `m${m}_`));
  await step(`new member ${m}`, [personal, teamA, teamB]);
}
await new Promise((r) => setTimeout(r, 2000));
console.log(`idle: heap + buffers after gc ${heap().toFixed(0)} MB (${(heap() - start).toFixed(0)} MB above the start)`);
