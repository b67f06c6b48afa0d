import { Document, HeadingLevel, Packer, Paragraph } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { TestGateway } from '../helpers/stack';
import type { PageDoc } from '../../capabilities/knowledge/store';

/** Helpers shared by the knowledge tests: uploads, waiting on a build, fixtures made on the spot. */
export async function uploadJson(gw: TestGateway, account: string, kb: string, body: Record<string, unknown>) {
  return gw.admin('POST', `/accounts/${account}/kbs/${kb}/documents`, body);
}

export async function uploadMultipart(gw: TestGateway, account: string, kb: string, filename: string, data: Buffer | string, type = 'application/octet-stream') {
  const form = new FormData();
  form.append('file', new Blob([typeof data === 'string' ? Buffer.from(data) : new Uint8Array(data)], { type }), filename);
  const res = await fetch(`${gw.url}/admin/v1/accounts/${account}/kbs/${kb}/documents`, {
    method: 'POST', headers: { authorization: `Bearer ${gw.config.ADMIN_TOKEN}` }, body: form,
  });
  return { status: res.status, body: (await res.json()) as any };
}

export async function waitBuild(gw: TestGateway, account: string, kb: string, build: string, timeoutMs = 150_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await gw.admin('GET', `/accounts/${account}/kbs/${kb}/builds/${build}`);
    if (r.status !== 200) throw new Error(`build read failed: ${JSON.stringify(r.body)}`);
    if (r.body.state === 'succeeded' || r.body.state === 'failed') return r.body;
    if (Date.now() > deadline) throw new Error(`build ${build} still ${r.body.state}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Upload and wait for the build to end. */
export async function load(gw: TestGateway, account: string, kb: string, filename: string, content: string): Promise<any> {
  const r = await uploadJson(gw, account, kb, { filename, content });
  if (r.status !== 202 && r.status !== 200) throw new Error(`upload refused: ${JSON.stringify(r.body)}`);
  return waitBuild(gw, account, kb, r.body.id);
}

export async function livePages(gw: TestGateway, account: string, kb = 'default'): Promise<PageDoc[]> {
  const pages = await gw.deps.pages.livePages({ account_id: account, kb_id: kb });
  return pages.sort((a, b) => (a.document_id === b.document_id ? (a.ordinal ?? 0) - (b.ordinal ?? 0) : a.document_id < b.document_id ? -1 : 1));
}

export async function makePdf(pages: string[][]): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = pdf.addPage([595, 842]);
    lines.forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 18, size: 12, font }));
  }
  return Buffer.from(await pdf.save());
}

export async function makeDocx(sections: Array<{ heading: string; paragraphs: string[] }>): Promise<Buffer> {
  const doc = new Document({
    sections: [{
      children: sections.flatMap((s) => [
        new Paragraph({ text: s.heading, heading: HeadingLevel.HEADING_1 }),
        ...s.paragraphs.map((p) => new Paragraph({ text: p })),
      ]),
    }],
  });
  return Packer.toBuffer(doc);
}
