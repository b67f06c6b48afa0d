import type { OutgoingLink, PageSource } from '../../../domain/knowledge/page';

/**
 * The compiler's contract: a document's extracted text in, pages out. Pure:
 * no I/O (the LLM compiler is given its model call as a function), so it is
 * tested without the stack.
 */

/** A document as the extractors (capabilities/knowledge/extract) hand it over: Markdown parts, one per PDF page, else one. */
export interface ExtractedDocument {
  format: 'markdown' | 'text' | 'html' | 'pdf' | 'docx';
  parts: Array<{ markdown: string; page: number | null }>;
}

export interface CompileInput {
  /** `{account_id}/{kb_id}`: ids of links to pages that do not exist yet are derived from it. */
  baseKey: string;
  documentId: string;
  filename: string;
  r2Key: string;
  /** ISO 8601; the caller's clock (the compiler reads none). */
  compiledAt: string;
  doc: ExtractedDocument;
}

/** What a page asks to link to; resolved against the base (links.ts), again whenever the base changes. */
export interface LinkRequests {
  /** `[[Target]]` titles (or aliases). */
  wiki: string[];
  /** Markdown links to other documents of the base: file name and optional heading anchor. */
  files: Array<{ file: string; anchor: string | null }>;
}

export interface CompiledPage {
  page_id: string;
  title: string;
  summary: string;
  tags: string[];
  aliases: string[];
  body: string;
  confidence: number;
  needs_review: boolean;
  source: PageSource;
  /** Heading slug, so `other.md#anchor` finds this page. */
  anchor: string;
  link_requests: LinkRequests;
}

export interface CompileResult {
  pages: CompiledPage[];
  /** Things the reader of a build should know (an LLM call that fell back to the rules, a page cut). */
  warnings: string[];
}

export interface Compiler {
  /** `rules` or the chat model's id: what `source.model` records. */
  readonly name: string;
  compile(input: CompileInput): Promise<CompileResult>;
  /**
   * Given the rules compiler's result for the document (computed off the
   * event loop), this compiler's own: absent for `rules` (the result is
   * kept), the model's fields for `llm`.
   */
  refine?(input: Omit<CompileInput, 'doc'>, rules: CompileResult): Promise<CompileResult>;
}

export type { OutgoingLink };
