/**
 * Relevance bench: nDCG@10 of the gateway's knowledge search (capabilities/knowledge/search-index.ts,
 * the index every surface uses) against plain BM25 implementations from PyPI on the
 * same public test collection, printed together in one run.
 *
 * Collection: Cranfield 1400 (1,400 aeronautics abstracts, 225 queries with graded
 * judgements), kept gzipped in dev/bench/data/cranfield (see its README). Each abstract
 * becomes a page: `.T` the title, `.W` the body; the baselines index title + body as
 * one text. Grades 1..4 (1 = complete answer) become gains 4..1; -1 entries are not
 * relevant. nDCG@10 with linear gains, averaged over the 225 queries, computed here
 * for every system from its top-10 run.
 *
 * Baselines run in a Python venv this script makes under dev/bench/.venv (ignored by git):
 * bm25s 0.3.16, rank-bm25 0.2.2, PyStemmer 3.1.0 from PyPI.
 *
 *   npx tsx dev/bench/relevance.ts
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import type { Page } from '../../domain/knowledge/page';
import { PageIndex } from '../../capabilities/knowledge/search-index';

const here = path.dirname(fileURLToPath(import.meta.url));
const dataDir = path.join(here, 'data', 'cranfield');
const venv = path.join(here, '.venv');
const PY_DEPS = ['bm25s==0.3.16', 'rank-bm25==0.2.2', 'pystemmer==3.1.0'];
const K = 10;

const read = (f: string) => gunzipSync(fs.readFileSync(path.join(dataDir, f))).toString('utf8');

/** `.I n` records with their `.X` fields. */
function records(text: string): Array<{ id: string; fields: Record<string, string> }> {
  const out: Array<{ id: string; fields: Record<string, string> }> = [];
  for (const chunk of text.split(/^\.I\s+/m).slice(1)) {
    const [idLine, ...rest] = chunk.split('\n');
    const fields: Record<string, string> = {};
    let cur = '';
    for (const line of rest) {
      const m = /^\.([A-Z])\s*$/.exec(line);
      if (m) cur = m[1];
      else if (cur) fields[cur] = `${fields[cur] ?? ''}${line}\n`;
    }
    for (const k of Object.keys(fields)) fields[k] = fields[k].replace(/\s+/g, ' ').trim();
    out.push({ id: idLine.trim(), fields });
  }
  return out;
}

const docs = records(read('cran.all.1400.gz')).map((r) => ({ id: String(Number(r.id)), title: r.fields.T ?? '', body: r.fields.W ?? '' }));
// Judgements number the queries 1..225 in file order (the .I ids skip numbers).
const queries = records(read('cran.qry.gz')).map((r, i) => ({ id: String(i + 1), text: r.fields.W ?? '' }));
const qrels = new Map<string, Map<string, number>>();
for (const line of read('cranqrel.gz').split('\n')) {
  const [q, d, code] = line.trim().split(/\s+/);
  if (!q || !d || code === undefined) continue;
  const grade = Number(code);
  if (grade < 1 || grade > 4) continue;
  if (!qrels.has(q)) qrels.set(q, new Map());
  qrels.get(q)!.set(String(Number(d)), 5 - grade);
}

function ndcgAt(run: Record<string, string[]>): number {
  let sum = 0;
  let n = 0;
  for (const q of queries) {
    const rel = qrels.get(q.id);
    if (!rel || rel.size === 0) continue;
    n++;
    const ranked = run[q.id] ?? [];
    let dcg = 0;
    ranked.slice(0, K).forEach((d, i) => (dcg += (rel.get(d) ?? 0) / Math.log2(i + 2)));
    const ideal = [...rel.values()].sort((a, b) => b - a).slice(0, K);
    const idcg = ideal.reduce((s, g, i) => s + g / Math.log2(i + 2), 0);
    sum += idcg > 0 ? dcg / idcg : 0;
  }
  return sum / n;
}

// Ours.
const pages: Page[] = docs.map((d) => ({
  id: d.id, kb_id: 'default', title: d.title, summary: '', tags: [], aliases: [], links: [], body: d.body,
  confidence: 1, needs_review: false, outgoing_links: [],
  source: { r2_key: '', filename: 'cran.all.1400', locator: d.id, compiled_at: '', model: 'rules' },
}));
const t0 = performance.now();
const index = new PageIndex(pages);
const ours: Record<string, string[]> = {};
for (const q of queries) ours[q.id] = index.search(q.text, K).hits.map((h) => h.page.id);
const oursMs = performance.now() - t0;

// Baselines.
const python = path.join(venv, 'bin', 'python');
if (!fs.existsSync(python)) execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
const have = spawnSync(python, ['-c', 'import bm25s, rank_bm25, Stemmer'], { stdio: 'ignore' }).status === 0;
if (!have) execFileSync(path.join(venv, 'bin', 'pip'), ['install', '--quiet', ...PY_DEPS], { stdio: 'inherit' });
const input = JSON.stringify({ docs: docs.map((d) => ({ id: d.id, text: `${d.title} ${d.body}` })), queries, k: K });
const baselines = JSON.parse(execFileSync(python, [path.join(here, 'relevance_bm25.py')], { input, maxBuffer: 64 << 20 }).toString()) as Record<string, Record<string, string[]>>;

const judged = queries.filter((q) => qrels.get(q.id)?.size).length;
console.log(`Cranfield 1400: ${docs.length} documents, ${judged} judged queries; nDCG@${K} (linear gains 4..1)`);
const rows: Array<[string, number]> = [['ours (capabilities/knowledge/search-index.ts)', ndcgAt(ours)], ...Object.entries(baselines).map(([name, run]) => [name, ndcgAt(run)] as [string, number])];
for (const [name, v] of rows) console.log(`  ${name.padEnd(34)} ${v.toFixed(4)}`);
const plain = ndcgAt(baselines.bm25s);
console.log(`ours - bm25s (plain BM25): ${(ndcgAt(ours) - plain >= 0 ? '+' : '')}${(ndcgAt(ours) - plain).toFixed(4)}  (index + ${queries.length} queries in ${oursMs.toFixed(0)} ms)`);
if (ndcgAt(ours) < plain) process.exitCode = 1;
