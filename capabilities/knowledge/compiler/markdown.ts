/**
 * The structure of a Markdown text, as far as the splitter needs it: front
 * matter (`title`, `aliases`, `tags`), ATX and setext headings outside code
 * fences, and the text between them. Extractors turn HTML, DOCX and PDF
 * into Markdown first, so this is the one structure reader.
 */
export interface FrontMatter {
  title?: string;
  aliases: string[];
  tags: string[];
}

export interface Section {
  /** Headings from the top down to this section's own; empty before the first heading. */
  path: string[];
  /** Markdown between this heading and the next. */
  body: string;
  page: number | null;
}

const FRONT = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/;

function listValue(v: string): string[] {
  const t = v.trim();
  const inner = t.startsWith('[') && t.endsWith(']') ? t.slice(1, -1) : t;
  return inner.split(',').map((s) => s.trim().replace(/^["']|["']$/g, '')).filter(Boolean);
}

/** Obsidian/Jekyll-style front matter (`key: value`, `key: [a, b]` or `key:` followed by `- item` lines). */
export function frontMatter(md: string): { meta: FrontMatter; rest: string } {
  const m = FRONT.exec(md);
  const meta: FrontMatter = { aliases: [], tags: [] };
  if (!m) return { meta, rest: md };
  let current: 'aliases' | 'tags' | null = null;
  for (const line of m[1].split(/\r?\n/)) {
    const item = /^\s+-\s+(.+)$/.exec(line) ?? /^-\s+(.+)$/.exec(line);
    if (item && current) {
      meta[current].push(...listValue(item[1]));
      continue;
    }
    const kv = /^([A-Za-z_]+)\s*:\s*(.*)$/.exec(line);
    if (!kv) continue;
    const key = kv[1].toLowerCase();
    current = null;
    if (key === 'title' && kv[2].trim()) meta.title = kv[2].trim().replace(/^["']|["']$/g, '');
    else if (key === 'aliases' || key === 'alias' || key === 'tags' || key === 'tag') {
      const k = key.startsWith('alias') ? 'aliases' : 'tags';
      if (kv[2].trim()) meta[k].push(...listValue(kv[2]));
      else current = k;
    }
  }
  return { meta, rest: md.slice(m[0].length) };
}

/** Split Markdown into sections at its headings (levels 1-6), keeping the heading path. */
export function sections(md: string, page: number | null): Section[] {
  const out: Section[] = [];
  const stack: Array<{ level: number; text: string }> = [];
  let body: string[] = [];
  let fence: string | null = null;
  const flush = () => {
    out.push({ path: stack.map((h) => h.text), body: body.join('\n').trim(), page });
    body = [];
  };
  const open = (level: number, text: string) => {
    flush();
    while (stack.length && stack[stack.length - 1].level >= level) stack.pop();
    stack.push({ level, text });
  };
  const lines = md.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const f = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (fence === null) fence = f[1][0];
      else if (f[1][0] === fence) fence = null;
      body.push(line);
      continue;
    }
    if (fence !== null) {
      body.push(line);
      continue;
    }
    const atx = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (atx && atx[2]) {
      open(atx[1].length, cleanInline(atx[2]));
      continue;
    }
    const next = lines[i + 1];
    if (line.trim() && next !== undefined && /^\s{0,3}(=+|-+)\s*$/.test(next) && !/^\s*[-*+]\s/.test(line) && !(body.at(-1) ?? '').trim()) {
      open(next.trim()[0] === '=' ? 1 : 2, cleanInline(line.trim()));
      i++;
      continue;
    }
    body.push(line);
  }
  flush();
  return out.filter((s) => s.body.length > 0);
}

/** Inline Markdown to plain text: links keep their label, wiki links their label or target, emphasis and code marks go. */
export function cleanInline(text: string): string {
  return text
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]+))?\]\]/g, (_, t: string, label?: string) => (label ?? t).trim())
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/(\*\*|__|\*|_|~~|`)(?=\S)([^*_~`]*?\S)\1/g, '$2')
    .replace(/\\([\\`*_{}[\]()#+\-.!|])/g, '$1')
    .trim();
}

/** A Markdown body as plain prose: no fences, tables, list markers or quote marks (for summaries). */
export function plainText(md: string): string {
  const lines: string[] = [];
  let fence = false;
  for (const raw of md.split(/\r?\n/)) {
    if (/^\s{0,3}(`{3,}|~{3,})/.test(raw)) {
      fence = !fence;
      continue;
    }
    if (fence) continue;
    if (/^\s*\|?\s*:?-{3,}/.test(raw)) continue;
    const line = raw
      .replace(/^\s{0,3}>\s?/, '')
      .replace(/^\s*([-*+]|\d+[.)])\s+/, '')
      .replace(/^\s*\|/, '')
      .replace(/\|\s*$/, '')
      .replace(/\s*\|\s*/g, ' · ');
    lines.push(cleanInline(line));
  }
  return lines.join('\n').replace(/\n{3,}/g, '\n\n').trim();
}

/** GitHub-style heading slug, kept for CJK: lower case, spaces to `-`, punctuation dropped. */
export function slug(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s+/g, '-');
}
