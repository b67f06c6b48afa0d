import MarkdownIt from 'markdown-it';
import { createRequire } from 'node:module';
import { raw, type Html } from './html';
import type { OutgoingLink } from '../../domain/knowledge/page';

/**
 * Knowledge pages as HTML: markdown-it with raw HTML off (a page's markup is
 * escaped, never run) and `[[wiki links]]` turned into links to the pages they
 * name, or marked as missing when the base has no such page yet.
 */
const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
const WIKI = /\[\[([^\]|#\n]+)(?:#[^\]|\n]*)?(?:\|([^\]\n]*))?\]\]/g;
const MISSING = '#missing-page';

const fold = (s: string) => s.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
const escapeLabel = (s: string) => s.replace(/[[\]\\]/g, '\\$&');

const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const t = tokens[idx];
  const href = String(t.attrGet('href') ?? '');
  if (href === MISSING) {
    t.attrSet('class', 'missing');
    t.attrSet('title', 'No page with this title yet');
    t.attrSet('aria-disabled', 'true');
  } else if (/^https?:/i.test(href)) {
    t.attrSet('rel', 'noreferrer');
  }
  return defaultLinkOpen(tokens, idx, options, env, self);
};

export function renderPage(body: string, links: OutgoingLink[], pageUrl: (id: string) => string): Html {
  const byTitle = new Map(links.filter((l) => l.resolved).map((l) => [fold(l.title), l.id]));
  const text = body.replace(WIKI, (_m, target: string, label?: string) => {
    const id = byTitle.get(fold(target));
    return `[${escapeLabel((label ?? target).trim())}](${id ? pageUrl(id) : MISSING})`;
  });
  return raw(md.render(text));
}

/** Tags worth showing: not an English stop word nor a bare verb form like "keeps" or "explains". */
const require = createRequire(import.meta.url);
const STOP = new Set<string>((require('stopword') as { eng: string[] }).eng);
const VERBS = new Set(
  ('keeps explains describes shows covers gives lists means makes uses takes needs allows helps lets says gets goes comes sets runs finds ' +
    'includes contains provides returns becomes starts ends works sees tells adds holds puts turns calls reads writes ' +
    'also another every within without between across still yet even well back way ways thing things lot lots able').split(' '),
);
export function shownTag(tag: string): boolean {
  const t = fold(tag);
  return t.length >= 3 && !STOP.has(t) && !VERBS.has(t);
}
