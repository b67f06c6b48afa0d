import { html, type Html } from './html';
import type { CCtx } from './context';
import { csrfInput } from './forms';

export interface NavItem {
  path: string;
  label: string;
}

/** The pages in the navigation; knowledge and agent pages add themselves when their services exist. */
export const NAV: NavItem[] = [
  { path: '/console/overview', label: 'Overview' },
  { path: '/console/keys', label: 'Keys' },
  { path: '/console/topup', label: 'Top-up' },
  { path: '/console/usage', label: 'Usage' },
  { path: '/console/tasks', label: 'Tasks' },
  { path: '/console/batches', label: 'Batches' },
  { path: '/console/kb', label: 'Knowledge' },
  { path: '/console/agents', label: 'Agents' },
  { path: '/console/models', label: 'Models' },
];

const assets = (extra: Html = html``) => html`<link rel="stylesheet" href="/console/assets/console.css">
${extra}<script src="/console/assets/htmx.min.js" defer></script>
<script src="/console/assets/console.js" defer></script>`;

function head(title: string, extraHead?: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false}'>
<title>${title} · Model Gateway console</title>
<link rel="icon" href="data:,">
${assets(extraHead)}
</head>`;
}

/** A signed-in page: header with the account switcher, navigation, content. */
/** How an account reads in the switcher and the context line. */
export function accountLabel(a: { name: string; role: string; enterprise?: boolean }): string {
  return a.role === 'personal' ? `${a.name} (personal account)` : a.role === 'operator' ? `${a.name} (${a.enterprise ? 'enterprise' : 'personal'} account)` : `${a.name} (enterprise, you are ${a.role})`;
}

/**
 * A signed-in page. `actingOn`: the account this page works on when it is not
 * the switcher's (the Agents page works on an enterprise; the Models page on
 * none); by default the switcher's account.
 */
export function page(ctx: CCtx, title: string, content: Html, opts: { extraHead?: Html; actingOn?: Html | string } = {}): string {
  const s = ctx.state.session!;
  const managed = ctx.state.managed ?? [];
  const current = ctx.state.current;
  const who = s.principal.kind === 'operator' ? 'operator' : (ctx.state.userEmail ?? 'user');
  const nav = s.principal.kind === 'operator' ? [...NAV, { path: '/console/accounts', label: 'Accounts' }, { path: '/console/channels', label: 'Channels' }] : NAV;
  return html`${head(title, opts.extraHead)}
<body hx-headers='{"x-csrf-token":"${s.csrf}"}'>
<a class="skip" href="#content">Skip to content</a>
<header class="top">
  <a class="brand" href="/console/overview">Model Gateway</a>
  ${current
    ? html`<form class="switch" method="post" action="/console/account">${csrfInput(s.csrf)}
      <label for="account-switch">Account</label>
      <select id="account-switch" name="account_id" data-autosubmit title="The account the pages show and change">
        ${managed.map((a) => html`<option value="${a.id}"${a.id === current.id ? html` selected` : ''}>${accountLabel(a)}</option>`)}
      </select>
      <button type="submit" class="js-hide">Switch</button></form>`
    : ''}
  <form class="signout" method="post" action="/console/signout">${csrfInput(s.csrf)}<span class="who">${who}</span> <button type="submit" class="link">Sign out</button></form>
</header>
<nav class="main" aria-label="Console pages">${nav.map((n) => html`<a href="${n.path}"${ctx.path.startsWith(n.path) ? html` aria-current="page"` : ''}>${n.label}</a>`)}</nav>
<main id="content" tabindex="-1">
<h1>${title}</h1>
${opts.actingOn !== undefined ? html`<p class="context" data-testid="acting-on">${opts.actingOn}</p>` : current ? html`<p class="context" data-testid="acting-on">Acting on <strong>${accountLabel(current)}</strong>${managed.length > 1 ? html` · switch in the header` : ''}</p>` : ''}
${content}
</main>
</body></html>`.value;
}

/** A page without a session (sign-in, errors before sign-in). */
export function barePage(title: string, content: Html): string {
  return html`${head(title)}
<body class="bare"><main class="narrow"><p class="brand">Model Gateway</p><h1>${title}</h1>${content}</main></body></html>`.value;
}
