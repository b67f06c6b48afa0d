import { createHash } from 'node:crypto';
import type { OutgoingLink } from '../../../domain/knowledge/page';
import type { LinkRequests } from './types';
import { CJK, fold } from './text';
import { cleanInline, slug } from './markdown';

/**
 * Links between pages of one base. A page asks for links three ways
 * (explicit `[[wiki links]]`, Markdown links to other documents, and
 * mentions of other pages' titles or aliases in its text); they are resolved
 * against the pages the base has now, and resolved again whenever the base
 * changes, so a link to a page that arrives later turns `resolved: true`
 * (and one whose target goes away turns `resolved: false`).
 */

/** At most this many outgoing links per page (explicit ones first). */
export const MAX_LINKS = 50;
/** Mentions shorter than this (visible characters: CJK counts 2) are ignored: too many false hits. */
const MIN_MENTION_WEIGHT = 4;

/** What a base's page offers as a link target. */
export interface LinkTarget {
  page_id: string;
  document_id: string;
  filename: string;
  title: string;
  aliases: string[];
  anchor: string;
  /** Order of the page inside its document (the first page stands for the document). */
  ordinal: number;
}

/** What a page asks to link to, and the text it may mention titles in. */
export interface LinkSource {
  page_id: string;
  body: string;
  link_requests: LinkRequests;
}

const WIKI = /\[\[([^\]|#\n]+)(?:#([^\]|\n]*))?(?:\|[^\]\n]*)?\]\]/g;
const MD_LINK = /(?<!!)\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;

/** The link requests written in a Markdown body. */
export function linkRequestsOf(md: string): LinkRequests {
  const wiki = new Set<string>();
  const files = new Map<string, { file: string; anchor: string | null }>();
  for (const m of md.matchAll(WIKI)) wiki.add(m[1].trim());
  for (const m of md.matchAll(MD_LINK)) {
    const href = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('#') || href.startsWith('//')) continue;
    const [pathPart, anchor] = href.split('#', 2);
    let file: string;
    try {
      file = decodeURIComponent(pathPart.split('?')[0]);
    } catch {
      file = pathPart;
    }
    file = file.split('/').filter(Boolean).pop() ?? '';
    if (!file) continue;
    files.set(`${file}#${anchor ?? ''}`, { file, anchor: anchor ? anchor : null });
  }
  return { wiki: [...wiki].filter(Boolean), files: [...files.values()] };
}

const stem = (file: string) => fold(file).replace(/\.[a-z0-9]+$/, '');

/** Lookups over a base's pages: by folded title or alias, by document file name. */
export class LinkIndex {
  private readonly byName = new Map<string, LinkTarget[]>();
  private readonly byFile = new Map<string, LinkTarget[]>();
  /**
   * For the mention scan: the lengths of the mentionable names by their
   * first two words (keysAt; one-word names by that word), longest first.
   * Keyed by words, not by first character: with thousands of titles, "the"
   * alone starts hundreds of them, and trying every length at every "the" of
   * every page made a base's link pass grow with the square of its size.
   */
  private readonly lengthsByKey = new Map<string, number[]>();

  constructor(readonly targets: LinkTarget[]) {
    const sorted = [...targets].sort((a, b) => a.ordinal - b.ordinal || (a.page_id < b.page_id ? -1 : 1));
    for (const t of sorted) {
      for (const name of new Set([t.title, ...t.aliases].map(fold).filter(Boolean))) push(this.byName, name, t);
      for (const key of new Set([fold(t.filename), stem(t.filename)])) push(this.byFile, key, t);
    }
    for (const name of this.byName.keys()) {
      if (!mentionable(name)) continue;
      const [one, two] = keysAt(name, 0);
      const key = two ?? `${one}\u0000`;
      const list = this.lengthsByKey.get(key) ?? [];
      if (!list.includes(name.length)) list.push(name.length);
      this.lengthsByKey.set(key, list);
    }
    for (const list of this.lengthsByKey.values()) list.sort((a, b) => b - a);
  }

  byTitle(name: string): LinkTarget | undefined {
    return this.byName.get(fold(name))?.[0];
  }

  byDocument(file: string, anchor: string | null): LinkTarget | undefined {
    const pages = this.byFile.get(fold(file)) ?? this.byFile.get(stem(file));
    if (!pages?.length) return undefined;
    if (anchor) {
      const a = slug(decodeSafe(anchor));
      const hit = pages.find((p) => p.anchor === a);
      if (hit) return hit;
    }
    return pages[0];
  }

  /** Targets whose title or alias occurs in the text (whole words for Latin script; anywhere for CJK). */
  mentions(text: string): LinkTarget[] {
    const t = fold(text);
    const found = new Map<string, LinkTarget>();
    if (this.lengthsByKey.size === 0) return [];
    for (let i = 0; i < t.length; ) {
      const end = runEnd(t, i);
      // A word starts here: at the start, after a character that is no letter or digit, or at any CJK character.
      const startsWord = i === 0 || !isWord(t, i - 1) || isCjk(t, i);
      let lengths: number[] | undefined;
      if (startsWord) {
        const [one, two] = keysAt(t, i);
        const byTwo = two === null ? undefined : this.lengthsByKey.get(two);
        const byOne = this.lengthsByKey.get(`${one}\u0000`);
        lengths = byTwo && byOne ? [...byTwo, ...byOne].sort((a, b) => b - a) : (byTwo ?? byOne);
      }
      let matched = 0;
      if (lengths) {
        for (const len of lengths) {
          if (i + len > t.length) continue;
          const cand = t.slice(i, i + len);
          const hits = this.byName.get(cand);
          if (!hits) continue;
          if (!isCjk(t, i + len - 1) && i + len < t.length && isWord(t, i + len)) continue;
          const target = hits[0];
          if (!found.has(target.page_id)) found.set(target.page_id, target);
          matched = len;
          break;
        }
      }
      // Inside a run of Latin letters no word starts, so the scan goes on at its end.
      i = matched ? i + matched : end;
    }
    return [...found.values()];
  }
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

/*
 * The scan's character tests: ASCII answered from the code unit (the scan visits every character of
 * every page of a base on each link pass, and a Unicode-class regular expression per character was
 * most of its time); anything else by the same expressions as before.
 */
function isWord(t: string, i: number): boolean {
  const c = t.charCodeAt(i);
  if (c < 128) return (c >= 48 && c <= 57) || (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
  return WORD_CHAR.test(t[i]);
}

/** No Han, Hiragana, Katakana or Hangul character lies below U+1100 (Hangul Jamo). */
function isCjk(t: string, i: number): boolean {
  return t.charCodeAt(i) >= 0x1100 && CJK.test(t[i]);
}

/**
 * The text at `i` as the scan keys names: its first word (runEnd), and its
 * first two words with what stands between them (null when no second word
 * follows). A name found at `i` has the same keys as the text there.
 */
function keysAt(t: string, i: number): [string, string | null] {
  const end1 = runEnd(t, i);
  let p = end1;
  while (p < t.length && !isWord(t, p)) p++;
  return [t.slice(i, end1), p < t.length ? t.slice(i, runEnd(t, p)) : null];
}

/**
 * The end of the key starting at `i`: a run of letters and digits that are
 * not CJK; a CJK character alone; any other character alone.
 */
function runEnd(t: string, i: number): number {
  if (i >= t.length) return i;
  if (isCjk(t, i) || !isWord(t, i)) return i + 1;
  let j = i + 1;
  while (j < t.length && isWord(t, j) && !isCjk(t, j)) j++;
  return j;
}

/** Whether a (folded) title or alias is long enough to be found as a mention. */
export function mentionable(name: string): boolean {
  let w = 0;
  for (const ch of name) w += CJK.test(ch) ? 2 : 1;
  return w >= MIN_MENTION_WEIGHT;
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, v: V) {
  const list = map.get(key);
  if (list) list.push(v);
  else map.set(key, [v]);
}

/** The id a link to a page that does not exist yet carries: stable per base and name. */
export function missingTargetId(baseKey: string, name: string): string {
  return `pg_${createHash('sha256').update(`${baseKey}\nmissing\n${fold(name)}`).digest('hex').slice(0, 24)}`;
}

/** Links out of one page, given the base as it is now. Explicit links first, then mentions; no link to itself. */
export function resolveLinks(baseKey: string, page: LinkSource, index: LinkIndex): OutgoingLink[] {
  const out = new Map<string, OutgoingLink>();
  const add = (l: OutgoingLink) => {
    if (l.id !== page.page_id && !out.has(l.id) && out.size < MAX_LINKS) out.set(l.id, l);
  };
  for (const name of page.link_requests.wiki) {
    const hit = index.byTitle(name);
    add(hit ? { id: hit.page_id, resolved: true, title: hit.title } : { id: missingTargetId(baseKey, name), resolved: false, title: name });
  }
  for (const f of page.link_requests.files) {
    const hit = index.byDocument(f.file, f.anchor);
    const name = f.anchor ? `${f.file}#${f.anchor}` : f.file;
    add(hit ? { id: hit.page_id, resolved: true, title: hit.title } : { id: missingTargetId(baseKey, name), resolved: false, title: name });
  }
  // Mentions in the text as read: link targets (URLs, file names) are not text.
  for (const hit of index.mentions(cleanInline(page.body))) add({ id: hit.page_id, resolved: true, title: hit.title });
  return [...out.values()];
}

/** `links[]` of the spec: ids of the resolved outgoing links. */
export const resolvedIds = (links: OutgoingLink[]): string[] => links.filter((l) => l.resolved).map((l) => l.id);

