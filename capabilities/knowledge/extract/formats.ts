import type { ExtractedDocument } from '../compiler/types';

/** The document formats a base accepts, recognised by file name, then by declared type. */
export type DocFormat = ExtractedDocument['format'];

const BY_EXTENSION: Record<string, DocFormat> = {
  md: 'markdown', markdown: 'markdown', mdown: 'markdown', mkd: 'markdown',
  txt: 'text', text: 'text',
  html: 'html', htm: 'html', xhtml: 'html',
  pdf: 'pdf',
  docx: 'docx',
};
const BY_TYPE: Record<string, DocFormat> = {
  'text/markdown': 'markdown', 'text/x-markdown': 'markdown', 'text/plain': 'text', 'text/html': 'html',
  'application/xhtml+xml': 'html', 'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
};
export const CONTENT_TYPE_OF: Record<DocFormat, string> = {
  markdown: 'text/markdown; charset=utf-8', text: 'text/plain; charset=utf-8', html: 'text/html; charset=utf-8',
  pdf: 'application/pdf', docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};
export const ACCEPTED = 'Markdown (.md), plain text (.txt), HTML (.html), PDF (.pdf) and Word (.docx)';

export function formatOf(filename: string, contentType?: string): DocFormat | null {
  const ext = /\.([A-Za-z0-9]+)$/.exec(filename)?.[1]?.toLowerCase();
  if (ext && BY_EXTENSION[ext]) return BY_EXTENSION[ext];
  const type = contentType?.split(';')[0].trim().toLowerCase();
  return (type && BY_TYPE[type]) || null;
}

/** Whether the bytes look like the format (a PDF starts with %PDF-, a DOCX is a ZIP, text has no NUL and is UTF-8). */
export function looksLike(format: DocFormat, data: Buffer): boolean {
  if (format === 'pdf') return data.subarray(0, 1024).includes('%PDF-');
  if (format === 'docx') return data[0] === 0x50 && data[1] === 0x4b;
  if (data.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(data);
    return true;
  } catch {
    return false;
  }
}
