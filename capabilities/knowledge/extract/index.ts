import type { NodeHtmlMarkdown } from 'node-html-markdown';
import type { ExtractedDocument } from '../compiler/types';
import type { DocFormat } from './formats';

/**
 * Bytes of an uploaded document to Markdown parts for the compiler, with
 * well-kept parsers: PDF.js (through unpdf) for PDF text page by page,
 * mammoth for DOCX (to HTML, keeping headings), node-html-markdown for HTML.
 * A file that cannot be read throws `UnreadableDocument` (the build fails
 * with its message; retrying would not help).
 */
export class UnreadableDocument extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableDocument';
  }
}

/**
 * The parsers are loaded on first use, not with this module: the gateway imports the knowledge
 * services (for their cleanup steps) but never extracts, and PDF.js, mammoth and the HTML
 * converter are megabytes of code it would otherwise hold from start (its idle memory).
 */
let html2md: { converter: NodeHtmlMarkdown; Converter: typeof NodeHtmlMarkdown } | undefined;
async function htmlConverter(): Promise<NonNullable<typeof html2md>> {
  if (!html2md) {
    const { NodeHtmlMarkdown: Converter } = await import('node-html-markdown');
    html2md ??= { converter: new Converter({ keepDataImages: false, useInlineLinks: true }), Converter };
  }
  return html2md;
}

export async function extract(format: DocFormat, data: Buffer): Promise<ExtractedDocument> {
  switch (format) {
    case 'markdown':
    case 'text':
      return { format, parts: [{ markdown: utf8(data), page: null }] };
    case 'html':
      return { format, parts: [{ markdown: await htmlToMarkdown(utf8(data)), page: null }] };
    case 'docx': {
      let html: string;
      try {
        const { default: mammoth } = await import('mammoth');
        html = (await mammoth.convertToHtml({ buffer: data })).value;
      } catch (err) {
        throw new UnreadableDocument(`the Word document could not be read: ${(err as Error).message}`);
      }
      return { format, parts: [{ markdown: await htmlToMarkdown(html), page: null }] };
    }
    case 'pdf': {
      let pages: string[];
      try {
        const { extractText, getDocumentProxy } = await import('unpdf');
        const pdf = await getDocumentProxy(new Uint8Array(data));
        pages = (await extractText(pdf, { mergePages: false })).text;
        await pdf.destroy();
      } catch (err) {
        throw new UnreadableDocument(`the PDF could not be read: ${(err as Error).message}`);
      }
      return { format, parts: pages.map((text, i) => ({ markdown: pdfPageText(text), page: i + 1 })) };
    }
  }
}

function utf8(data: Buffer): string {
  return data.toString('utf8').replace(/^\uFEFF/, '');
}

/** HTML to Markdown; the `<title>` becomes front matter (the document's title when it has no heading). */
export async function htmlToMarkdown(html: string): Promise<string> {
  const { converter, Converter } = await htmlConverter();
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1]?.replace(/\s+/g, ' ').trim();
  const body = html.replace(/<head[\s\S]*?<\/head>/i, '').replace(/<(script|style|noscript)[\s\S]*?<\/\1>/gi, '');
  const md = converter.translate(body);
  return title ? `---\ntitle: ${JSON.stringify(decodeEntities(Converter, title))}\n---\n${md}` : md;
}

function decodeEntities(Converter: typeof NodeHtmlMarkdown, s: string): string {
  return Converter.translate(s).replace(/\\([\\`*_{}[\]()#+\-.!|])/g, '$1');
}

/** PDF text runs: keep paragraph breaks, join hyphenated line ends, escape a leading `#` (a PDF has no Markdown headings). */
function pdfPageText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/(\p{L})-\n(\p{Ll})/gu, '$1$2')
    .replace(/^(\s*)#/gm, '$1\\#')
    .trim();
}
