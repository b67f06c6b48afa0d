import { html, type Html } from './html';
import { when } from './time';
import type { AuditDoc } from '../../capabilities/accounts/store';
import type { CCtx } from './context';
import type { ConsoleServices } from './services';

/** Who did it and from where, for the key audit record (`detail.ip`, `detail.user_agent`). */
export function auditOrigin(ctx: CCtx): { ip: string | null; user_agent: string | null } {
  return { ip: ctx.ip || null, user_agent: ctx.get('user-agent') || null };
}

const ACTIONS: Record<string, string> = {
  'key.create': 'Created', 'key.reveal': 'Revealed the key', 'key.disable': 'Disabled', 'key.enable': 'Re-enabled',
  'key.update': 'Changed', 'key.delete': 'Deleted',
};

/** A short browser name from a user agent ("Chrome", "Firefox", "curl"), the whole string on hover. */
export function agentName(ua: string | null | undefined): string {
  if (!ua) return '';
  const m = /(Edg|Firefox|Chrome|Safari|curl|node|python-requests|Go-http-client)\b/i.exec(ua);
  const n = m?.[1] ?? 'a client';
  return n === 'Edg' ? 'Edge' : n;
}

/** The audit lines: when, what, the person's email (or "the operator"), the address and browser they came from. */
export async function auditList(svc: ConsoleServices, rows: AuditDoc[]): Promise<Html> {
  const labels = await svc.deps.people.labelsOf(rows.map((r) => (r.actor.startsWith('user:') ? r.actor.slice(5) : null)));
  const who = (actor: string) => (actor.startsWith('user:') ? labels.get(actor.slice(5)) ?? 'a former user' : actor === 'operator' ? 'the operator' : actor === 'api' ? 'the management API' : actor);
  return html`<ul class="audit" data-testid="audit">${rows.map((a) => {
    const d = (a.detail ?? {}) as { ip?: string | null; user_agent?: string | null; changed?: string[] };
    return html`<li data-action="${a.action}">${when(a.created_at)} · <strong>${ACTIONS[a.action] ?? a.action}</strong>${d.changed?.length ? ` ${d.changed.join(', ')}` : ''} by <span class="actor">${who(a.actor)}</span>${
      d.ip ? html` · from <span title="${d.user_agent ?? ''}">${d.ip}${d.user_agent ? ` (${agentName(d.user_agent)})` : ''}</span>` : ''}</li>`;
  })}</ul>`;
}
