/**
 * Text helpers that work for Chinese and Japanese as well as for languages
 * with spaces: words and sentences come from `Intl.Segmenter` (ICU's
 * dictionary segmentation for CJK), never from splitting on spaces.
 */
const words = new Intl.Segmenter(undefined, { granularity: 'word' });
const sentences = new Intl.Segmenter(undefined, { granularity: 'sentence' });

/** Han, Hiragana, Katakana, Hangul. */
export const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const ONLY_HIRAGANA = /^[\p{Script=Hiragana}ー]+$/u;

/**
 * The segmenter's time grows with the square of the text it is given (V8's
 * Intl.Segmenter: 80 abstracts, 120 KB, took 5.7 s in one call, against 0.3 s
 * for a quarter of them), so long texts are segmented in pieces of at most
 * PIECE characters, cut where a boundary is anyway: after a sentence end and
 * a space for sentences, at a space (else after CJK punctuation) for words.
 * Results are the same as one call's, except for a sentence or word running
 * on for more than PIECE characters without a place to cut (cut there).
 */
const PIECE = 2048;

function pieces(text: string, cutAfter: RegExp): string[] {
  if (text.length <= PIECE) return [text];
  const out: string[] = [];
  let start = 0;
  while (text.length - start > PIECE) {
    const window = text.slice(start, start + PIECE);
    let cut = -1;
    for (const m of window.matchAll(cutAfter)) cut = m.index + m[0].length;
    if (cut <= 0) cut = PIECE;
    out.push(text.slice(start, start + cut));
    start += cut;
  }
  out.push(text.slice(start));
  return out;
}

const WORD_CUT = /\s+|[。！？、，]/g;
const SENTENCE_CUT = /[.!?。！？][)"'’”]*\s+|\n\s*\n/g;

/** Word-like segments, in order. */
export function wordsOf(text: string): string[] {
  const out: string[] = [];
  for (const piece of pieces(text, WORD_CUT)) for (const s of words.segment(piece)) if (s.isWordLike) out.push(s.segment);
  return out;
}

export function sentencesOf(text: string): string[] {
  const out: string[] = [];
  for (const piece of pieces(text, SENTENCE_CUT)) {
    for (const s of sentences.segment(piece)) {
      const t = s.segment.trim();
      if (t) out.push(t);
    }
  }
  return out;
}

/** Visible length: a CJK character counts as two Latin ones (it carries about a word). */
export function weightOf(text: string): number {
  let n = 0;
  for (const ch of text) n += CJK.test(ch) ? 2 : 1;
  return n;
}

/** Cut to about `max` visible characters at a sentence or word boundary, with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  if (weightOf(text) <= max) return text;
  let out = '';
  for (const s of words.segment(text)) {
    if (weightOf(out + s.segment) > max - 1) break;
    out += s.segment;
  }
  return `${out.trimEnd()}…`;
}

/** Case- and width-folded form for matching titles, aliases and tags (NFKC: full-width Latin = ASCII). */
export function fold(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}

const STOP = new Set(
  (
    'the a an and or but if then else of to in on at by for with from as is are was were be been being it its this that these those ' +
    'there here which who whom what when where why how not no yes can could should would will shall may might must do does did done ' +
    'have has had having you your we our they their he she his her i me my us them than so such also into over under about more most ' +
    'other some any each all both few many much very just only own same too via per use used using see one two three etc e.g i.e ' +
    'der die das und oder ein eine le la les et des un une du de en el los las y por para con'
  ).split(' '),
);
/** Common Chinese function words (ICU keeps them as words). */
const STOP_CJK = new Set('的 了 和 是 在 有 与 及 或 也 就 都 而 被 把 对 从 以 为 于 之 其 这 那 这个 那个 一个 我们 你们 他们 它们 可以 没有 因为 所以 如果 但是 并且 以及 通过 进行 使用 这些 那些 什么 如何 已经 还是 不是 就是 一些 等等'.split(' '));

/** A word worth keeping as a keyword: not a stop word, not punctuation, not a short particle. */
export function isKeyword(word: string): boolean {
  const w = fold(word);
  if (STOP.has(w) || STOP_CJK.has(w)) return false;
  if (/^\d+([.,]\d+)*$/.test(w)) return false;
  if (CJK.test(w)) return !ONLY_HIRAGANA.test(w) && [...w].length >= 2;
  return w.length >= 3 && /\p{L}/u.test(w);
}

/** Keywords by frequency (ties: first seen), folded. */
export function keywords(text: string, limit: number, boost: Set<string> = new Set()): string[] {
  const counts = new Map<string, number>();
  for (const w of wordsOf(text)) {
    if (!isKeyword(w)) continue;
    const k = fold(w);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts.entries()]
    .map(([k, n], i) => ({ k, score: n + (boost.has(k) ? 2 : 0), i }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, limit)
    .map((x) => x.k);
}
