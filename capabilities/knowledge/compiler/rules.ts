import { createHash } from 'node:crypto';
import type { CompiledPage, CompileInput, CompileResult, Compiler } from './types';
import { cleanInline, frontMatter, plainText, sections, slug, type Section } from './markdown';
import { linkRequestsOf } from './links';
import { clip, fold, isKeyword, keywords, sentencesOf, weightOf, wordsOf } from './text';

/**
 * The deterministic compiler (the default; no network): one page per
 * section of the document's structure (headings; PDF pages), long sections
 * cut at paragraph boundaries into pages of bounded size, short ones merged
 * into their neighbour. Title from the heading (or the first line), summary
 * from the first sentences, tags from front matter, `#hashtags` and the most
 * frequent keywords, aliases from front matter, the heading path and
 * `Long Name (ABBR)` patterns.
 */
export const RULES_MODEL = 'rules';
/** A page body holds at most this many visible characters (CJK counts 2). */
export const MAX_PAGE_WEIGHT = 6000;
/** Sections shorter than this join the next one (same heading parent) instead of making a thin page. */
const MIN_PAGE_WEIGHT = 40;
const SUMMARY_WEIGHT = 320;
const TITLE_WEIGHT = 120;
const MAX_TAGS = 6;

interface Draft {
  path: string[];
  body: string;
  page: number | null;
  part: number;
  parts: number;
}

export class RulesCompiler implements Compiler {
  readonly name = RULES_MODEL;

  async compile(input: CompileInput): Promise<CompileResult> {
    return compileRules(input);
  }
}

export function compileRules(input: CompileInput): CompileResult {
  const fileTitle = input.filename.replace(/\.[A-Za-z0-9]+$/, '').replace(/[_-]+/g, ' ').trim() || input.filename;
  const parts = input.doc.parts.map((p, i) => (i === 0 ? { ...p, ...splitFront(p.markdown) } : { ...p, meta: null, rest: p.markdown }));
  const meta = parts[0]?.meta ?? { aliases: [], tags: [] };
  const raw: Section[] = parts.flatMap((p) => sections(p.rest, p.page));
  const docTitle = meta.title ?? raw.find((s) => s.path.length > 0)?.path[0] ?? fileTitle;
  const drafts = bound(merge(raw));
  const warnings: string[] = [];
  if (drafts.length === 0) warnings.push(`${input.filename}: no text could be read from the document`);

  const docWords = wordsOf(plainText(raw.map((s) => s.body).join('\n'))).filter(isKeyword).map(fold);
  const docTop = new Set(keywords(docWords.join(' '), 12));
  const seen = new Map<string, number>();
  const pages: CompiledPage[] = drafts.map((d, i) => {
    const heading = d.path.at(-1);
    const text = plainText(d.body);
    const firstLine = text.split('\n').find((l) => l.trim())?.trim() ?? '';
    const fromHeading = heading !== undefined;
    let title = heading ?? (i === 0 ? docTitle : titleFromLine(firstLine) ?? `${docTitle} (${i + 1})`);
    if (i === 0 && !fromHeading && meta.title) title = meta.title;
    title = clip(title, TITLE_WEIGHT);
    if (d.parts > 1) title = `${title} (${d.part}/${d.parts})`;

    const { summary, sentences } = summarise(text);
    const locator = locatorOf(d, input.doc.format);
    const key = `${d.path.join('\u241f')}\u241e${d.page ?? ''}\u241e${d.part}`;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);

    const aliases = new Set<string>();
    const plainTitle = heading ?? title;
    for (const a of abbreviations(plainTitle)) aliases.add(a);
    if (d.path.length > 1 && d.parts === 1) aliases.add(d.path.join(' / '));
    if (i === 0) for (const a of meta.aliases) aliases.add(a);
    if (i === 0 && docTitle !== title && d.parts === 1) aliases.add(docTitle);
    aliases.delete(title);

    const tags = tagsOf(d.body, text, title, i === 0 ? meta.tags : [], docTop);
    const weight = weightOf(text);
    const confidence = score({ fromHeading: fromHeading || (i === 0 && !!meta.title), weight, sentences, tags: tags.length });
    return {
      page_id: pageId(input.documentId, key, n),
      title,
      summary,
      tags,
      aliases: [...aliases].slice(0, 10),
      body: d.body,
      confidence,
      needs_review: confidence < 0.6,
      source: { r2_key: input.r2Key, filename: input.filename, locator, compiled_at: input.compiledAt, model: RULES_MODEL },
      anchor: heading ? slug(heading) : '',
      link_requests: linkRequestsOf(d.body),
    };
  });
  return { pages, warnings };
}

function splitFront(md: string) {
  const { meta, rest } = frontMatter(md);
  return { meta, rest };
}

/** Stable across rebuilds of the same document: the document id and the section's place in its structure. */
export function pageId(documentId: string, structureKey: string, n: number): string {
  return `pg_${createHash('sha256').update(`${documentId}\n${structureKey}\n${n}`).digest('hex').slice(0, 24)}`;
}

/**
 * A thin section (a heading over a line or two) joins the page before it when
 * that page is its parent or sibling on the same PDF page and the result
 * stays within bounds; its heading stays in the text as a bold line.
 */
function merge(list: Section[]): Section[] {
  const out: Section[] = [];
  for (const s of list) {
    const prev = out.at(-1);
    const w = weightOf(plainText(s.body));
    if (prev && w < MIN_PAGE_WEIGHT && prev.page === s.page && s.path.length > 0 && related(prev.path, s.path) && weightOf(prev.body) + weightOf(s.body) < MAX_PAGE_WEIGHT) {
      prev.body = `${prev.body}\n\n**${s.path.at(-1)}**\n\n${s.body}`;
      continue;
    }
    out.push({ ...s });
  }
  return out;
}

/** `b` is a child or a sibling of `a`. */
function related(a: string[], b: string[]): boolean {
  const parent = b.slice(0, -1);
  const isChild = a.length === parent.length && a.every((x, i) => x === parent[i]);
  const isSibling = a.length === b.length && a.length > 1 && a.slice(0, -1).every((x, i) => x === parent[i]);
  return isChild || isSibling;
}

/** Long sections cut at paragraph (then sentence) boundaries into pages of at most MAX_PAGE_WEIGHT. */
function bound(list: Section[]): Draft[] {
  const out: Draft[] = [];
  for (const s of list) {
    const chunks: string[] = [];
    let cur = '';
    for (const para of paragraphs(s.body)) {
      if (cur && weightOf(cur) + weightOf(para) + 2 > MAX_PAGE_WEIGHT) {
        chunks.push(cur);
        cur = '';
      }
      cur = cur ? `${cur}\n\n${para}` : para;
    }
    if (cur) chunks.push(cur);
    chunks.forEach((body, i) => out.push({ path: s.path, body, page: s.page, part: i + 1, parts: chunks.length }));
  }
  return out;
}

/** Paragraphs, each cut to fit a page (a paragraph longer than a page is cut at sentences, then hard). */
function paragraphs(md: string): string[] {
  const out: string[] = [];
  for (const p of md.split(/\n\s*\n/)) {
    if (weightOf(p) <= MAX_PAGE_WEIGHT) {
      if (p.trim()) out.push(p.trim());
      continue;
    }
    let cur = '';
    for (const s of sentencesOf(p)) {
      for (const piece of hardCut(s)) {
        if (cur && weightOf(cur) + weightOf(piece) + 1 > MAX_PAGE_WEIGHT) {
          out.push(cur);
          cur = '';
        }
        cur = cur ? `${cur} ${piece}` : piece;
      }
    }
    if (cur) out.push(cur);
  }
  return out;
}

function hardCut(s: string): string[] {
  if (weightOf(s) <= MAX_PAGE_WEIGHT) return [s];
  const chars = [...s];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += MAX_PAGE_WEIGHT / 2) out.push(chars.slice(i, i + MAX_PAGE_WEIGHT / 2).join(''));
  return out;
}

function titleFromLine(line: string): string | null {
  const t = cleanInline(line);
  if (!t || weightOf(t) > 80) return null;
  return t.replace(/[.:：。]$/, '');
}

/** First sentences up to SUMMARY_WEIGHT (sentence boundaries from Intl.Segmenter: 。！？ as well as . ! ?). */
function summarise(text: string): { summary: string; sentences: number } {
  const prose = text.split('\n').filter((l) => weightOf(l.trim()) > 0).join(' ');
  const all = sentencesOf(prose);
  let summary = '';
  let used = 0;
  for (const s of all) {
    if (summary && weightOf(summary) + weightOf(s) > SUMMARY_WEIGHT) break;
    summary = summary ? `${summary}${/[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]$/.test(summary) ? '' : ' '}${s}` : s;
    used++;
  }
  return { summary: clip(summary, SUMMARY_WEIGHT), sentences: used === 0 ? 0 : all.length };
}

/** `Retrieval-Augmented Generation (RAG)` gives `RAG` and the long name; `检索增强生成（RAG）` likewise. */
function abbreviations(title: string): string[] {
  const m = /^(.+?)\s*[（(]([^()（）]{1,40})[)）]\s*$/.exec(title);
  return m ? [m[1].trim(), m[2].trim()] : [];
}

function tagsOf(md: string, text: string, title: string, declared: string[], docTop: Set<string>): string[] {
  const tags = new Set(declared.map((t) => fold(t.replace(/^#/, ''))).filter(Boolean));
  for (const m of md.matchAll(/(?:^|\s)#([\p{L}\p{N}_][\p{L}\p{N}_/-]{1,40})/gu)) tags.add(fold(m[1]));
  const titleWords = new Set(wordsOf(title).filter(isKeyword).map(fold));
  for (const k of keywords(`${title}\n${text}`, MAX_TAGS * 2, new Set([...titleWords, ...docTop]))) {
    if (tags.size >= MAX_TAGS) break;
    tags.add(k);
  }
  return [...tags].slice(0, MAX_TAGS);
}

/** How much the split and summary had to go on: a heading, enough text, whole sentences, keywords. */
function score(f: { fromHeading: boolean; weight: number; sentences: number; tags: number }): number {
  let c = 0.35;
  if (f.fromHeading) c += 0.3;
  if (f.weight >= 200) c += 0.15;
  else if (f.weight >= MIN_PAGE_WEIGHT) c += 0.05;
  if (f.sentences >= 2) c += 0.1;
  if (f.tags >= 2) c += 0.05;
  if (f.weight < MIN_PAGE_WEIGHT) c = Math.min(c, 0.3);
  return Math.round(Math.min(0.95, c) * 100) / 100;
}

function locatorOf(d: Draft, format: string): string {
  const where = d.path.length ? d.path.join(' > ') : '';
  const part = d.parts > 1 ? ` (part ${d.part}/${d.parts})` : '';
  if (format === 'pdf' && d.page !== null) return `p. ${d.page}${where ? ` > ${where}` : ''}${part}`;
  return `${where || '(document start)'}${part}`;
}
