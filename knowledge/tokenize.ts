import { stemmer } from 'stemmer';
import { eng, jpn, zho } from 'stopword';

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

const segmenter = new Intl.Segmenter('zh', { granularity: 'word' });
const STOP = new Set<string>([...eng, ...zho, ...jpn]);
const HAS_LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const LATIN_WORD = /^[a-z]+$/;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
/** Scripts written without spaces between words: these runs need the dictionary segmenter. */
const NEEDS_SEGMENTER = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const WORD_RUN = /[\p{L}\p{M}\p{N}]+/gu;
const stems = new Map<string, string>();

export interface Token {
  term: string;
  /** Offsets of the word in the text given (after normalisation the length may differ; the offsets index the original). */
  start: number;
  end: number;
}

/** The index term for one word, or null for a stop word or punctuation. */
export function termOf(word: string): string | null {
  const w = word.normalize('NFKC').toLowerCase();
  if (!HAS_LETTER_OR_DIGIT.test(w)) return null;
  if (STOP.has(w)) return null;
  if (LATIN_WORD.test(w) && w.length > 2) {
    let stem = stems.get(w);
    if (stem === undefined) {
      stem = stemmer(w);
      if (stems.size < 200_000) stems.set(w, stem);
    }
    return stem;
  }
  return w;
}

/** Terms with their positions in `text`. */
export function tokensOf(text: string): Token[] {
  const out: Token[] = [];
  if (!text) return out;
  for (const run of text.matchAll(WORD_RUN)) {
    const word = run[0];
    const at = run.index!;
    if (!NEEDS_SEGMENTER.test(word)) {
      const term = termOf(word);
      if (term) out.push({ term, start: at, end: at + word.length });
      continue;
    }
    for (const seg of segmenter.segment(word)) {
      if (!seg.isWordLike) continue;
      const term = termOf(seg.segment);
      if (term) out.push({ term, start: at + seg.index, end: at + seg.index + seg.segment.length });
    }
  }
  return out;
}

/** Terms of `text`, in order. */
export function tokenize(text: string): string[] {
  return tokensOf(text).map((t) => t.term);
}

export function hasCjk(text: string): boolean {
  return CJK.test(text);
}
