import { z } from 'zod';
import type { CompiledPage, CompileInput, CompileResult, Compiler } from './types';
import { compileRules } from './rules';
import { clip, fold } from './text';

/**
 * The LLM compiler: the rules compiler splits the document (structure,
 * locators, stable ids and links stay deterministic), then a chat model of
 * the catalogue writes each page's title, summary and tags. The model call is
 * given as a function (capabilities/knowledge/llm-chat.ts sends it through the gateway's
 * providers and channel ladder), so this file does no I/O. A page whose call
 * fails or answers nonsense keeps the rules' fields, is marked
 * `needs_review`, names `rules` as its model, and the build lists a warning.
 */
export interface PageFieldsRequest {
  /** The page being written (the call's charge is keyed on it). */
  pageId: string;
  filename: string;
  headingPath: string;
  body: string;
}

/** What the model must answer (a forced function call, or JSON text). */
export const PageFields = z.object({
  title: z.string().trim().min(1).max(200),
  summary: z.string().trim().min(1).max(2000),
  tags: z.array(z.string().trim().min(1).max(60)).max(12),
});
export type PageFields = z.infer<typeof PageFields>;

export type AskModel = (req: PageFieldsRequest) => Promise<unknown>;

/** The body the model sees is cut to this many characters. */
const PROMPT_BODY_CHARS = 6000;

export class LlmCompiler implements Compiler {
  constructor(
    readonly name: string,
    private readonly ask: AskModel,
  ) {}

  async compile(input: CompileInput): Promise<CompileResult> {
    return this.refine(input, compileRules(input));
  }

  async refine(input: Omit<CompileInput, 'doc'>, base: CompileResult): Promise<CompileResult> {
    const warnings = [...base.warnings];
    const pages: CompiledPage[] = [];
    for (const p of base.pages) {
      let fields: PageFields;
      try {
        const answer = await this.ask({ pageId: p.page_id, filename: input.filename, headingPath: p.source.locator, body: p.body.slice(0, PROMPT_BODY_CHARS) });
        fields = PageFields.parse(answer);
      } catch (err) {
        warnings.push(`${p.source.locator}: the model ${this.name} gave no usable answer (${(err as Error).message.slice(0, 200)}); kept the rules compiler's title, summary and tags`);
        pages.push({ ...p, needs_review: true, confidence: Math.min(p.confidence, 0.5) });
        continue;
      }
      const title = clip(fields.title, 120);
      const aliases = new Set(p.aliases);
      // The heading stays findable (wiki links and mentions written against it still resolve).
      if (fold(title) !== fold(p.title)) aliases.add(p.title);
      aliases.delete(title);
      const tags = [...new Set(fields.tags.map((t) => fold(t.replace(/^#/, ''))).filter(Boolean))].slice(0, 6);
      pages.push({
        ...p,
        title,
        summary: clip(fields.summary, 600),
        tags: tags.length ? tags : p.tags,
        aliases: [...aliases].slice(0, 10),
        confidence: Math.round(Math.min(0.95, p.confidence + 0.05) * 100) / 100,
        source: { ...p.source, model: this.name },
      });
    }
    return { pages, warnings };
  }
}

/** The instruction sent with each page. */
export function pageFieldsPrompt(req: PageFieldsRequest): { system: string; user: string } {
  return {
    system:
      'You index a knowledge base. For the section of a document you are given, call record_page with: a short title (at most 12 words), ' +
      'a summary of one to three sentences, and up to 6 lowercase topical tags. Write them in the language of the section.',
    user: `Document: ${req.filename}\nSection: ${req.headingPath}\n\n${req.body}`,
  };
}

/** JSON schema of the `record_page` function (the answer's shape). */
export const RECORD_PAGE_TOOL = {
  type: 'function',
  function: {
    name: 'record_page',
    description: 'Record the title, summary and tags of one knowledge-base page.',
    parameters: {
      type: 'object',
      properties: {
        title: { type: 'string', description: 'short title' },
        summary: { type: 'string', description: 'one to three sentences' },
        tags: { type: 'array', items: { type: 'string' }, description: 'lowercase topical tags' },
      },
      required: ['title', 'summary', 'tags'],
    },
  },
} as const;
