/**
 * Search speed: p50/p95/p99 of one search (limit 20, with snippets) on a base of
 * 10,000 pages, through the same Retrieval service the endpoints use, with the
 * base's corpus already cached (the steady state: an unchanged base costs one
 * Redis GET per search, not counted here). Pages are made from the Cranfield
 * abstracts (dev/bench/data/cranfield): each page mixes sentences of several
 * abstracts (seeded, so every run builds the same base). Queries: the 225
 * Cranfield queries (about 9 terms each after stop words) and 225 two-word
 * queries drawn from page titles.
 *
 *   npx tsx dev/bench/search-speed.ts [pages=10000]
 */
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import type { Page } from '../../domain/knowledge/page';
import type { PageDoc } from '../../capabilities/knowledge/store';
import { CorpusCache } from '../../capabilities/knowledge/corpus';
import { Retrieval } from '../../capabilities/knowledge/retrieval';
import type { BaseRef, PageStore } from '../../capabilities/knowledge/page-store';

const N = Number(process.argv[2] ?? 10_000);
const here = path.dirname(fileURLToPath(import.meta.url));
const read = (f: string) => gunzipSync(fs.readFileSync(path.join(here, 'data', 'cranfield', f))).toString('utf8');
const field = (chunk: string, f: string) => (new RegExp(`^\\.${f}\\s*\\n([\\s\\S]*?)(?=^\\.[A-Z]\\s*$|(?![\\s\\S]))`, 'm').exec(chunk)?.[1] ?? '').replace(/\s+/g, ' ').trim();
const abstracts = read('cran.all.1400.gz').split(/^\.I\s+/m).slice(1).map((c) => ({ title: field(c, 'T'), body: field(c, 'W') }));
const queries = read('cran.qry.gz').split(/^\.I\s+/m).slice(1).map((c) => field(c, 'W'));

let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
const sentences = abstracts.flatMap((a) => a.body.split(/(?<=\.)\s+/).filter((s) => s.length > 20));

const docs: PageDoc[] = [];
for (let i = 0; i < N; i++) {
  const a = pick(abstracts);
  const paras = Array.from({ length: 2 + Math.floor(rand() * 4) }, () => Array.from({ length: 2 + Math.floor(rand() * 4) }, () => pick(sentences)).join(' '));
  const words = a.title.split(' ').filter((w) => w.length > 5);
  docs.push({
    _id: `b:${i}`, page_id: `pg_${i}`, account_id: 'acct', kb_id: 'default', document_id: `doc_${i % 500}`, build_id: 'b',
    title: `${a.title} (${i})`, summary: paras[0].slice(0, 200), tags: words.slice(0, 3), aliases: [], links: [],
    body: `# ${a.title}\n\n${paras.join('\n\n')}`, confidence: 0.9, needs_review: false,
    source: { r2_key: 'k', filename: 'f.md', locator: '#', compiled_at: '', model: 'rules' }, outgoing_links: [], created_at: new Date(),
  });
}
const short = Array.from({ length: 225 }, () => pick(docs).title.split(' ').filter((w) => w.length > 4).slice(0, 2).join(' ') || 'flow');

// The cache's only view of storage: this base at version `version`.
let version = 1;
let live = docs;
const store = { version: async () => version, livePages: async () => live } as unknown as PageStore;
const retrieval = new Retrieval(new CorpusCache(store, { budgetBytes: 2 ** 30 }));
const base: BaseRef[] = [{ account_id: 'acct', kb_id: 'default' }];

const chars = docs.reduce((s, d) => s + d.body.length, 0);
/** Wall and CPU milliseconds of one call. */
async function timed(f: () => Promise<unknown>): Promise<string> {
  const t0 = performance.now();
  const c = process.cpuUsage();
  await f();
  const used = process.cpuUsage(c);
  return `${(performance.now() - t0).toFixed(0)} ms wall, ${((used.user + used.system) / 1000).toFixed(0)} ms cpu`;
}
let t = 0;
console.log(`base: ${N} pages, ${(chars / 1e6).toFixed(1)} M characters; index built in ${await timed(() => retrieval.search(base, 'warm up', { limit: 20, offset: 0 }))}`);

function report(name: string, qs: string[]) {
  return (async () => {
    const wall: number[] = [];
    const cpu: number[] = [];
    let hits = 0;
    for (let round = 0; round < 3; round++) {
      for (const q of qs) {
        t = performance.now();
        const c = process.cpuUsage();
        const r = await retrieval.search(base, q, { limit: 20, offset: 0 });
        const used = process.cpuUsage(c);
        wall.push(performance.now() - t);
        cpu.push((used.user + used.system) / 1000);
        hits += r.total;
      }
    }
    const pct = (xs: number[], x: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(x * xs.length))];
    const f = (xs: number[]) => `p50 ${pct(xs, 0.5).toFixed(2)}  p95 ${pct(xs, 0.95).toFixed(2)}  p99 ${pct(xs, 0.99).toFixed(2)} ms`;
    console.log(`${name.padEnd(26)} n=${wall.length}  wall: ${f(wall)} | cpu: ${f(cpu)}  (mean total_hits ${(hits / wall.length).toFixed(0)})`);
    return { wall: pct(wall, 0.95), cpu: pct(cpu, 0.95) };
  })();
}
const long = await report('Cranfield queries (long)', queries);
const brief = await report('two-word title queries', short);
// A new version of the base (one document of ~20 pages rebuilt with new text): the index of the next search.
live = docs.map((d) => (d.document_id === 'doc_7' ? { ...d, body: `${d.body}\n\nRevised: ${pick(sentences)}` } : d));
version = 2;
console.log(`after one document (${docs.filter((d) => d.document_id === 'doc_7').length} pages) changed: index rebuilt in ${await timed(() => retrieval.search(base, 'warm up', { limit: 20, offset: 0 }))}`);
const [load] = (await import('node:os')).loadavg();
console.log(`p95 (worst of the two sets): wall ${Math.max(long.wall, brief.wall).toFixed(2)} ms, cpu ${Math.max(long.cpu, brief.cpu).toFixed(2)} ms; target 20 ms; machine load average ${load.toFixed(1)} on ${(await import('node:os')).cpus().length} cores (wall time includes waiting for a core)`);
