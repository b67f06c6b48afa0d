/**
 * A research-abstract collection of real size, generated deterministically:
 * a word bigram model trained on the Cranfield 1400 abstracts
 * (dev/bench/data/cranfield, public, shipped gzipped) writes titles and
 * abstracts from a seeded generator, so every run (and every machine) makes
 * the same bytes without any download. Defaults match the upload of issue 22:
 * 5,183 abstracts, about 7.8 MB, as 10 Markdown files, one `## Title`
 * section per abstract (the rules compiler makes one page of each).
 *
 *   npx tsx dev/bench/lib/abstracts.ts [dir]   writes the files (default .data/abstracts)
 */
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

export interface CorpusOptions {
  abstracts?: number;
  files?: number;
  /** Total size aimed at, bytes (abstract lengths are drawn around total / abstracts). */
  bytes?: number;
  seed?: number;
}

export interface CorpusFile {
  filename: string;
  markdown: string;
  abstracts: number;
}

const here = path.dirname(fileURLToPath(import.meta.url));

function cranfieldAbstracts(): string[] {
  const text = gunzipSync(fs.readFileSync(path.join(here, '..', 'data', 'cranfield', 'cran.all.1400.gz'))).toString('utf8');
  return text.split(/^\.I\s+/m).slice(1).map((c) => (/^\.W\s*\n([\s\S]*?)(?=^\.[A-Z]\s*$|(?![\s\S]))/m.exec(c)?.[1] ?? '').replace(/\s+/g, ' ').trim()).filter(Boolean);
}

/** Seeded 32-bit generator (mulberry32). */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function generateCorpus(opts: CorpusOptions = {}): CorpusFile[] {
  const n = opts.abstracts ?? 5183;
  const nFiles = opts.files ?? 10;
  const target = opts.bytes ?? 7.1e6;
  const rand = rng(opts.seed ?? 22);
  // Bigram successors per word; sentence starts after a full stop.
  const next = new Map<string, string[]>();
  const starts: string[] = [];
  for (const a of cranfieldAbstracts()) {
    const words = a.split(' ').filter(Boolean);
    let prev = '.';
    for (const w of words) {
      if (prev === '.') starts.push(w);
      const list = next.get(prev) ?? [];
      list.push(w);
      next.set(prev, list);
      prev = /[.?!]$/.test(w) ? '.' : w;
    }
  }
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
  const sentence = (maxWords: number): string => {
    const out: string[] = [];
    let w = pick(starts);
    while (out.length < maxWords) {
      out.push(w);
      if (/[.?!]$/.test(w)) break;
      const succ = next.get(w);
      if (!succ) break;
      w = pick(succ);
    }
    let s = out.join(' ').replace(/[,;:]$/, '');
    if (!/[.?!]$/.test(s)) s += '.';
    return s[0].toUpperCase() + s.slice(1);
  };
  const title = (): string => {
    let t = '';
    while (t.split(' ').length < 5) t = sentence(8 + Math.floor(rand() * 8)).replace(/\s*[.?!]$/, '');
    return t.length > 140 ? t.slice(0, t.lastIndexOf(' ', 140)) : t;
  };
  const perAbstract = target / n;
  const files: CorpusFile[] = [];
  let made = 0;
  for (let f = 0; f < nFiles; f++) {
    const count = Math.floor(((f + 1) * n) / nFiles) - Math.floor((f * n) / nFiles);
    const parts: string[] = [`# Abstracts, part ${f + 1}\n\nGenerated research abstracts (dev/bench/lib/abstracts.ts), ${count} of them.\n`];
    for (let i = 0; i < count; i++) {
      const want = perAbstract * (0.6 + rand() * 0.8) - 40;
      const paras: string[] = [];
      let body = '';
      let para: string[] = [];
      while (body.length + para.join(' ').length < want) {
        para.push(sentence(40));
        if (para.length >= 3 + Math.floor(rand() * 4)) {
          paras.push(para.join(' '));
          body = paras.join('\n\n');
          para = [];
        }
      }
      if (para.length) paras.push(para.join(' '));
      made++;
      parts.push(`## ${title()} (A${String(made).padStart(4, '0')})\n\n${paras.join('\n\n')}\n`);
    }
    files.push({ filename: `abstracts-${String(f + 1).padStart(2, '0')}.md`, markdown: parts.join('\n'), abstracts: count });
  }
  return files;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = path.resolve(process.argv[2] ?? '.data/abstracts');
  fs.mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  const files = generateCorpus();
  let bytes = 0;
  for (const f of files) {
    fs.writeFileSync(path.join(dir, f.filename), f.markdown);
    bytes += Buffer.byteLength(f.markdown);
  }
  console.log(`${files.length} files, ${files.reduce((s, f) => s + f.abstracts, 0)} abstracts, ${(bytes / 1e6).toFixed(2)} MB in ${dir} (${(performance.now() - t0).toFixed(0)} ms)`);
}
