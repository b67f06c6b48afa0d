// The production example (deploy/production/) stays loadable: every channel
// passes the management API's rules, and every key and URL variable it names
// is listed in the env file.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { readCatalogueFile, channelRecordOfSeed } from '../../capabilities/catalogue/records';
import { Catalogue } from '../../domain/catalogue';
import { channelProblems, resolveChannels } from '../../domain/channels';
import { getTranslator } from '../../protocols';
import type { Protocol } from '../../protocols/types';

const file = readCatalogueFile('deploy/production/catalogue.json');
const env = readFileSync('deploy/production/production.env.example', 'utf8');
const envNames = new Set([...env.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]));

test('every channel of the production example passes the channel rules', (t) => {
  const catalogue = new Catalogue(file.models, file.pricing_rules);
  for (const c of file.channels) {
    const problems = channelProblems(channelRecordOfSeed(c), (id) => catalogue.resolve(id)?.endpoint_type, (a, b) => !!getTranslator(a as Protocol, b as Protocol));
    t.deepEqual(problems, [], c.id);
  }
});

test('the example names real vendors for each family and only variables its env file lists', (t) => {
  const vendors = new Set(file.channels.map((c) => c.vendor));
  for (const v of ['openai', 'anthropic', 'google', 'volcengine-ark', 'minimax', 'suno', 'midjourney-proxy']) t.true(vendors.has(v), v);
  for (const c of file.channels) {
    if ('env' in c.credentials) t.true(envNames.has(c.credentials.env), `${c.id}: ${c.credentials.env}`);
    const v = /^\$\{([A-Z0-9_]+)\}/.exec(c.base_url);
    if (v) t.true(envNames.has(v[1]) && v[1].endsWith('_BASE_URL'), `${c.id}: ${v[1]}`);
    else t.regex(c.base_url, /^https:\/\//, c.id);
  }
});

test('every enabled chat model of the example has a channel on chat-completions', (t) => {
  const ids = new Map(file.models.map((m) => [m.id, m.id]));
  const ladders = resolveChannels(file.channels.map(channelRecordOfSeed), (id) => ids.get(id), () => ({}), (u) => u);
  const catalogue = new Catalogue(file.models, file.pricing_rules, ladders);
  for (const m of catalogue.models.filter((m) => m.endpoint_type === 'chat' && m.callable && !m.retired)) {
    t.true(catalogue.channels(m, 'chat-completions').length > 0, m.id);
  }
});
