import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ConsoleState, CCtx } from '../context';
import { html, raw, type Html } from '../html';
import { page } from '../layout';
import { NANO_PER_CREDIT } from '../../../domain/money';
import { currentAccount } from '../access';
import { publicBaseUrl } from '../../../platform/config';
import { cost, usd } from '../money';
import type { ConsoleServices } from '../services';
import { keyLabel, keyState } from './keys';
import { openTasks, taskRow } from './tasks';

/** JSON for a <script type="application/json"> island: `<` escaped so it cannot end the element. */
export const jsonIsland = (v: unknown) => raw(JSON.stringify(v).replace(/</g, '\\u003c'));

/** The first callable chat model whose id starts with one of `prefixes`, else the first chat model. */
function chatModel(svc: ConsoleServices, prefixes: string[]): string {
  const chat = svc.deps.catalogue().models.filter((m) => m.endpoint_type === 'chat' && !m.retired && m.callable);
  return (chat.find((m) => prefixes.some((p) => m.id.startsWith(p))) ?? chat[0])?.id ?? 'gpt-4.1';
}

/** One copyable snippet per SDK style, each with the base URL that SDK expects. */
export function snippets(base: string, models: { openai: string; anthropic: string; google: string }) {
  return [
    { id: 'openai', title: 'OpenAI SDK (Python)', baseUrl: `${base}/v1`, install: 'pip install openai', code: `from openai import OpenAI

client = OpenAI(base_url="${base}/v1", api_key=os.environ["GATEWAY_API_KEY"])
reply = client.chat.completions.create(
    model="${models.openai}",
    messages=[{"role": "user", "content": "Hello!"}],
)
print(reply.choices[0].message.content)` },
    { id: 'anthropic', title: 'Anthropic SDK (Python)', baseUrl: base, install: 'pip install anthropic', code: `import anthropic

client = anthropic.Anthropic(base_url="${base}", api_key=os.environ["GATEWAY_API_KEY"])
reply = client.messages.create(
    model="${models.anthropic}",
    max_tokens=256,
    messages=[{"role": "user", "content": "Hello!"}],
)
print(reply.content[0].text)` },
    { id: 'google', title: 'Google GenAI SDK (Python)', baseUrl: base, install: 'pip install google-genai', code: `from google import genai
from google.genai import types

client = genai.Client(api_key=os.environ["GATEWAY_API_KEY"],
                      http_options=types.HttpOptions(base_url="${base}"))
reply = client.models.generate_content(model="${models.google}", contents="Hello!")
print(reply.text)` },
    { id: 'curl', title: 'curl', baseUrl: `${base}/v1`, install: '', code: `curl ${base}/v1/chat/completions \\
  -H "Authorization: Bearer $GATEWAY_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "${models.openai}", "messages": [{"role": "user", "content": "Hello!"}]}'` },
  ].map((s) => (s.id === 'curl' ? s : { ...s, code: `import os\n${s.code}` }));
}

function quickStart(ctx: CCtx, svc: ConsoleServices, firstRun: boolean, key: Html | null): Html {
  const base = publicBaseUrl(svc.deps.config);
  const list = snippets(base, {
    openai: chatModel(svc, ['gpt-', 'openai']), anthropic: chatModel(svc, ['claude', 'anthropic']), google: chatModel(svc, ['gemini']),
  });
  const body = html`
<p>Point any of these SDKs at the gateway; one key and one balance work for all of them.</p>
<dl class="facts">
  <dt>Base URL</dt><dd><code id="base-url" data-testid="base-url">${base}</code> <button type="button" data-copy="#base-url">Copy</button></dd>
  <dt>Your key</dt><dd>${key ? html`${key} <a href="/console/keys">reveal or manage it</a>` : html`none yet: <a href="/console/keys#new-key" data-testid="create-key">create your first key</a>`}</dd>
</dl>
<p class="hint">Put the key in the environment first: <code>export GATEWAY_API_KEY=sk-…</code> (Keys → Reveal key → Copy).</p>
<div class="snippets">${list.map((s) => html`<section class="snippet" data-sdk="${s.id}"><h3>${s.title}</h3>
<p class="hint">Base URL <code>${s.baseUrl}</code>${s.install ? html` · <code>${s.install}</code>` : ''}</p>
<div class="code"><button type="button" class="copy" data-copy="#snip-${s.id}">Copy</button><pre><code id="snip-${s.id}">${s.code}</code></pre></div></section>`)}</div>
<p><a class="button primary" href="/console/keys#new-key">Create a key</a> <a class="button" href="/console/models">Browse models and prices</a> <a class="button" href="/console/topup">Add funds</a></p>`;
  return firstRun
    ? html`<section class="card" id="quickstart" data-testid="quickstart"><h2>Get started in a minute</h2>${body}</section>`
    : html`<details class="card" id="quickstart" data-testid="quickstart"><summary>Quick start: base URL and SDK snippets</summary>${body}</details>`;
}

export function overviewRoutes(router: Router<ConsoleState>, svc: ConsoleServices, signedIn: Middleware<ConsoleState>): void {
  router.get('/console/overview', signedIn, async (ctx) => {
    const accountId = currentAccount(ctx);
    const [balance, spend, tasks, keys] = await Promise.all([
      svc.deps.wallet.balance(accountId),
      svc.usageQuery.spend(accountId, 30),
      openTasks(svc, accountId, 20),
      svc.deps.keys.listByAccount(accountId),
    ]);
    const live = keys.filter((k) => keyState(k) === 'active' && !k.agent_id).sort((a, b) => +a.created_at - +b.created_at);
    const firstRun = spend.models.length === 0;
    const top = spend.models.slice(0, 6);
    const chart = {
      days: spend.days,
      series: top.map((m) => ({ label: m.model, values: m.perDay.map((n) => n / NANO_PER_CREDIT) })),
    };
    ctx.type = 'html';
    ctx.body = page(ctx, 'Overview', html`
${firstRun ? quickStart(ctx, svc, true, live[0] ? keyLabel(svc, live[0]) : null) : ''}
<section class="cards">
  <div class="card stat"><p class="label">Balance</p><p class="value" data-testid="balance">${usd(balance)}</p><p><a href="/console/topup">Add funds</a></p></div>
  <div class="card stat"><p class="label">Spend, last 30 days</p><p class="value" data-testid="spend-30d">${cost(spend.totalNano)}</p><p><a href="/console/usage">Usage</a></p></div>
  <div class="card stat"><p class="label">Open tasks</p><p class="value">${tasks.length}</p><p><a href="/console/tasks">Tasks</a></p></div>
</section>
${firstRun ? html`<section class="card empty" data-testid="spend-empty"><h2>Spend by day and model</h2>
<p class="muted">No calls charged in the last 30 days. Once a key makes its first call, this shows the spend per day, stacked by model, and a table by model.</p></section>` : html`
<section class="card">
  <h2>Spend by day and model</h2>
  <div id="spend-chart" class="chart" role="img" aria-label="Spend per day in USD, stacked by model"></div>
  <script type="application/json" id="spend-data">${jsonIsland(chart)}</script>
</section>
<section class="card">
  <h2>Spend by model</h2>
  <div class="table-wrap"><table class="bars">
  <thead><tr><th>Model</th><th class="num">Spend</th><th class="bar-col"></th></tr></thead>
  <tbody>${spend.models.map((m) => html`<tr><td>${m.model}</td><td class="num">${cost(m.totalNano)}</td>
  <td class="bar-col"><meter min="0" max="${spend.totalNano}" value="${m.totalNano}"></meter></td></tr>`)}</tbody></table></div>
</section>`}
<section class="card">
  <h2>Open async tasks</h2>
  ${tasks.length === 0 ? html`<p class="muted">No task is running. Image, video, music and speech requests that run in the background show their progress here.</p>` : html`<div class="table-wrap"><table>
  <thead><tr><th>Task</th><th>Model</th><th>Status</th><th>Submitted</th></tr></thead>
  <tbody>${tasks.map((t) => taskRow(t, false))}</tbody></table></div>`}
</section>
${firstRun ? '' : quickStart(ctx, svc, false, live[0] ? keyLabel(svc, live[0]) : null)}`, { extraHead: firstRun ? undefined : html`<link rel="stylesheet" href="/console/assets/uPlot.min.css"><script src="/console/assets/uPlot.iife.min.js" defer></script>` });
  });
}
