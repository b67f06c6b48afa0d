import type { Page } from '../../domain/knowledge/page';
import type { BaseRef } from '../knowledge/page-store';

/** The retrieval interface every edge uses (capabilities/knowledge/retrieval.ts). */
export interface PageSearch {
  search(bases: BaseRef[], q: string, opts: { limit: number; offset: number; versions?: readonly number[]; snippets?: boolean }): Promise<{ total: number; hits: Array<{ page: Page; score: number; snippet: string }> }>;
}

/** Tokens are estimated as bytes / 4, the same measure as the pre-charge input estimate (spec 1 section 8). */
const BYTES_PER_TOKEN = 4;
/** A page whose cut would leave less than this many bytes of it is left out instead. */
const MIN_PAGE_BYTES = 200;

export interface InjectedContext {
  text: string;
  pageIds: string[];
}

const HEADER = 'Knowledge-base pages related to the latest user message. Answer from them when they apply and cite pages by id.\n';

/**
 * The injected context: the best hits first, each as id, title, summary and
 * body, until the token budget is spent (the last page that fits only in part
 * is cut; a sliver is left out). Null when no page fits.
 */
export function contextMessage(pages: Page[], budgetTokens: number): InjectedContext | null {
  let left = budgetTokens * BYTES_PER_TOKEN - Buffer.byteLength(HEADER);
  const parts: string[] = [];
  const pageIds: string[] = [];
  for (const page of pages) {
    const head = `\n[page ${page.id}] ${page.title}\n${page.summary ? `${page.summary}\n` : ''}`;
    const whole = `${head}${page.body}\n`;
    const size = Buffer.byteLength(whole);
    if (size <= left) {
      parts.push(whole);
      pageIds.push(page.id);
      left -= size;
      continue;
    }
    if (left >= MIN_PAGE_BYTES && Buffer.byteLength(head) + MIN_PAGE_BYTES / 2 <= left) {
      parts.push(`${cutToBytes(whole, left - 4)}…\n`);
      pageIds.push(page.id);
    }
    break;
  }
  return pageIds.length ? { text: HEADER + parts.join(''), pageIds } : null;
}

/** The longest prefix of `s` within `bytes` UTF-8 bytes, never splitting a character. */
function cutToBytes(s: string, bytes: number): string {
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= bytes) return s;
  let end = bytes;
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}
