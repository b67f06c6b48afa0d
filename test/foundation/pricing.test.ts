import test from 'ava';
import { readCatalogueFile } from '../../capabilities/catalogue/records';
import { Catalogue } from '../../domain/catalogue';
import { chatCharge, prechargeEstimate, type TokenUsage } from '../../domain/pricing';

const file = readCatalogueFile('data/catalogue.json');
const cat = new Catalogue(file.models, file.pricing_rules);
const rules = file.pricing_rules;
const m = (id: string) => cat.resolve(id)!;
const u = (p: Partial<TokenUsage>): TokenUsage => ({ inputTokens: 0, outputTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, serverToolCalls: 0, ...p });
const during = new Date('2026-11-21T12:00:00Z');
const after = new Date('2027-02-01T12:00:00Z');

test('plain tokens: gpt-5.1 1000 in / 500 out = 1000*1.25/1M + 500*10/1M', (t) => {
  t.is(chatCharge(m('gpt-5.1'), rules, u({ inputTokens: 1000, outputTokens: 500 }), during).costNano, 1_250_000 + 5_000_000);
});

test('cached tokens are charged at the cached price automatically', (t) => {
  // 10000 in of which 8000 cached: 2000*1.25 + 8000*0.125 per 1M
  const c = chatCharge(m('gpt-5.1'), rules, u({ inputTokens: 10000, cachedTokens: 8000 }), during);
  t.is(c.lines.input, 2_500_000);
  t.is(c.lines.cached, 1_000_000);
  t.is(c.costNano, 3_500_000);
});

test('claude: cache writes x1.25 input, hits at cached (input x0.1)', (t) => {
  // sonnet: input 3/M, cached 0.3/M. 1000 plain, 4000 written, 5000 read, 100 out (15/M)
  const c = chatCharge(m('claude-sonnet-4-5'), rules, u({ inputTokens: 10000, cachedTokens: 5000, cacheWriteTokens: 4000, outputTokens: 100 }), during);
  t.is(c.lines.input, 3_000_000);
  t.is(c.lines.cacheWrite, 15_000_000); // 4000 * 3 * 1.25 / 1M credits = 0.015
  t.is(c.lines.cached, 1_500_000);
  t.is(c.lines.output, 1_500_000);
  t.is(c.costNano, 21_000_000);
  // another family charges a write at the plain input price
  const g = chatCharge(m('gpt-5.1'), rules, u({ inputTokens: 4000, cacheWriteTokens: 4000 }), during);
  t.is(g.lines.cacheWrite, 5_000_000);
});

test('promotions: deepseek x0.6 and qwen x0.3, cached scaled too; none after they end', (t) => {
  // deepseek-v3.2: 0.28 in, 0.42 out, 0.028 cached. 1M in (400k cached), 1M out
  const d = chatCharge(m('deepseek-v3.2'), rules, u({ inputTokens: 1_000_000, cachedTokens: 400_000, outputTokens: 1_000_000 }), during);
  t.is(d.lines.input, 100_800_000); // 600k * 0.28/M * 0.6 = 0.1008
  t.is(d.lines.cached, 6_720_000); // 400k * 0.028/M * 0.6 = 0.00672
  t.is(d.lines.output, 252_000_000); // 0.42 * 0.6
  const q = chatCharge(m('qwen3-max'), rules, u({ inputTokens: 1_000_000, outputTokens: 1_000_000 }), during);
  t.is(q.costNano, 360_000_000 + 1_800_000_000); // (1.2 + 6) * 0.3
  const later = chatCharge(m('qwen3-max'), rules, u({ inputTokens: 1_000_000, outputTokens: 1_000_000 }), after);
  t.is(later.costNano, 7_200_000_000);
});

test('long context: >= 200K prompt doubles input, cached and output on the two models only', (t) => {
  const below = chatCharge(m('gemini-2.5-pro'), rules, u({ inputTokens: 199_999, outputTokens: 1000 }), during);
  const at = chatCharge(m('gemini-2.5-pro'), rules, u({ inputTokens: 200_000, cachedTokens: 100_000, outputTokens: 1000 }), during);
  t.is(below.costNano, Math.round(199_999 * 1250) + 10_000_000);
  t.is(at.lines.input, 250_000_000); // 100k * 1.25/M * 2
  t.is(at.lines.cached, 25_000_000); // 100k * 0.125/M * 2
  t.is(at.lines.output, 20_000_000); // 1000 * 10/M * 2
  t.is(chatCharge(m('gemini-3-pro-preview'), rules, u({ inputTokens: 250_000 }), during).costNano, 1_000_000_000);
  // another model of the family is not doubled
  t.is(chatCharge(m('gemini-2.5-flash'), rules, u({ inputTokens: 250_000 }), during).costNano, 75_000_000);
});

test('server-side tool calls: 0.674 each for grok, recorded apart', (t) => {
  const c = chatCharge(m('grok-4'), rules, u({ inputTokens: 1000, outputTokens: 100, serverToolCalls: 3 }), during);
  t.is(c.lines.serverTools, 2_022_000_000);
  t.is(c.costNano, 3_000_000 + 1_500_000 + 2_022_000_000);
  t.is(chatCharge(m('gpt-5.1'), rules, u({ serverToolCalls: 3 }), during).costNano, 0);
});

test('pre-charge estimate: bytes/4 input plus max_tokens or min(default_max_tokens, 32768)', (t) => {
  // 4000 bytes -> 1000 tokens; max_tokens 100 -> 1000*1.25 + 100*10 per 1M
  t.is(prechargeEstimate(m('gpt-5.1'), rules, 4000, 100, during), 1_250_000 + 1_000_000);
  // claude-sonnet default 64000 -> capped 32768
  t.is(prechargeEstimate(m('claude-sonnet-4-5'), rules, 4, undefined, during), 3000 + 32768 * 15_000);
  // gpt-5.1 default 16384
  t.is(prechargeEstimate(m('gpt-5.1'), rules, 3, undefined, during), 1250 + 16384 * 10_000);
});

test('pre-charge estimate: a max_tokens priced past 2^53 nano saturates (the gate answers 402, not 500)', (t) => {
  t.is(prechargeEstimate(m('gpt-5.1'), rules, 4, 1e18, during), Number.MAX_SAFE_INTEGER);
});
