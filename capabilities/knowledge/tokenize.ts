import { stemmer } from 'stemmer';
import { createRequire } from 'node:module';

/**
 * The one tokeniser of knowledge search: pages are indexed and queries are
 * read with it, so both sides agree on every term.
 *
 * - Runs of letters and digits are words; a run holding Chinese, Japanese,
 *   Korean or Thai script goes through `Intl.Segmenter` (word granularity),
 *   which splits it on ICU's dictionary, so a Chinese or Japanese query finds
 *   a Chinese or Japanese page. (Only those runs: the segmenter is about ten
 *   times slower than the regular expression on Latin text.)
 * - Text is NFKC-normalised (full-width letters and digits become ASCII) and
 *   lower-cased.
 * - Stop words (English, Chinese, Japanese lists of the `stopword` package)
 *   are dropped; English words are reduced with the Porter stemmer so
 *   "indexing" finds "indexed".
 */

// Both made on first use, not when the gateway starts: the segmenter loads ICU's CJK dictionary and the
// `stopword` package holds the lists of 62 languages (about 10 MB of a gateway's idle memory together);
// a gateway that serves no knowledge search never needs them.
let segmenter: Intl.Segmenter | undefined;
let stopWords: Set<string> | undefined;
const segmenterOf = () => (segmenter ??= new Intl.Segmenter('zh', { granularity: 'word' }));
function stopSet(): Set<string> {
  if (!stopWords) {
    const { eng, zho, jpn } = createRequire(import.meta.url)('stopword') as Record<'eng' | 'zho' | 'jpn', string[]>;
    stopWords = new Set<string>([...eng, ...zho, ...jpn]);
  }
  return stopWords;
}
const HAS_LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const LATIN_WORD = /^[a-z]+$/;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
/** Scripts written without spaces between words: these runs need the dictionary segmenter. */
const NEEDS_SEGMENTER = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const ASCII_WORD = /^[A-Za-z0-9]+$/;

export interface Token {
  term: string;
  /** Offsets of the word in the text given (after normalisation the length may differ; the offsets index the original). */
  start: number;
  end: number;
}

/** The index term for one word, or null for a stop word or punctuation. */
export function termOf(word: string): string | null {
  if (ASCII_WORD.test(word)) return asciiTermOf(word.toLowerCase());
  const w = word.normalize('NFKC').toLowerCase();
  if (!HAS_LETTER_OR_DIGIT.test(w)) return null;
  if (stopSet().has(w)) return null;
  if (LATIN_WORD.test(w) && w.length > 2) return stemOf(w);
  return w;
}

/** Term of each lower-cased ASCII word seen (null: a stop word), bounded. */
const asciiTerms = new Map<string, string | null>();

/** termOf for a lower-cased word of ASCII letters and digits (NFKC leaves those alone). */
function asciiTermOf(w: string): string | null {
  let term = asciiTerms.get(w);
  if (term === undefined) {
    term = stopSet().has(w) ? null : w.length > 2 && LATIN_WORD.test(w) ? stemmer(w) : w;
    if (asciiTerms.size < 200_000) asciiTerms.set(w, term);
  }
  return term;
}

function stemOf(w: string): string {
  return asciiTermOf(w) ?? w;
}

const WORD_AT = /[\p{L}\p{M}\p{N}]+/uy;

/**
 * Calls `each(term, start, end)` for every term of `text`, in order: the
 * terms of every run of letters, marks and digits (`[\p{L}\p{M}\p{N}]+`).
 * Runs of ASCII letters and digits (most words of most pages) are found by a
 * character loop and reduced without Unicode normalisation (same terms as
 * termOf); other runs go through a Unicode expression, and CJK and Thai runs
 * through the segmenter.
 */
export function eachTerm(text: string, each: (term: string, start: number, end: number) => void): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    let c = text.charCodeAt(i);
    if (c < 128) {
      if (!isAsciiAlnum(c)) {
        i++;
        continue;
      }
      const start = i;
      let upper = false;
      do {
        if (c >= 65 && c <= 90) upper = true;
        c = ++i < n ? text.charCodeAt(i) : 0;
      } while (isAsciiAlnum(c));
      if (c < 128) {
        const word = text.slice(start, i);
        const term = asciiTermOf(upper ? word.toLowerCase() : word);
        if (term) each(term, start, i);
        continue;
      }
      // The run goes on in other scripts: read it whole below.
      i = start;
    }
    WORD_AT.lastIndex = i;
    const m = WORD_AT.exec(text);
    if (!m) {
      i++;
      continue;
    }
    const word = m[0];
    const at = i;
    i += word.length;
    if (!NEEDS_SEGMENTER.test(word)) {
      const term = termOf(word);
      if (term) each(term, at, i);
      continue;
    }
    for (const seg of segmenterOf().segment(word)) {
      if (!seg.isWordLike) continue;
      const term = termOf(seg.segment);
      if (term) each(term, at + seg.index, at + seg.index + seg.segment.length);
    }
  }
}

function isAsciiAlnum(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90);
}

/** Terms with their positions in `text`. */
export function tokensOf(text: string): Token[] {
  const out: Token[] = [];
  eachTerm(text, (term, start, end) => out.push({ term, start, end }));
  return out;
}

/** Terms of `text`, in order. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  eachTerm(text, (term) => out.push(term));
  return out;
}

export function hasCjk(text: string): boolean {
  return CJK.test(text);
}
