import test from 'ava';
import { readCatalogueFile, channelRecordOfSeed } from '../../capabilities/catalogue/records';
import { simulatorChannels, warnSimulatorChannels } from '../../capabilities/catalogue/simulator-check';
import { Catalogue } from '../../domain/catalogue';
import { resolveChannels } from '../../domain/channels';

/**
 * The chart seeds the image's data/catalogue.json unless catalogue.existingConfigMap names another; its channels call
 * ${SIMULATOR_URL}, by default http://127.0.0.1:8090, a loopback where no upstream listens in a pod. A production
 * gateway or worker says so at start, loudly, naming the channels; compose's simulator and the production catalogue
 * raise nothing.
 */
function catalogueOf(file: string, vars: Record<string, string>): Catalogue {
  const f = readCatalogueFile(file);
  const ids = new Map(f.models.map((m) => [m.id, m.id]));
  const sub = (u: string) => u.replace(/\$\{([A-Z0-9_]+)\}/g, (_, n: string) => vars[n] ?? `\${${n}}`);
  const live = f.channels.map(channelRecordOfSeed).filter((c) => c.enabled);
  return new Catalogue(f.models, f.pricing_rules, resolveChannels(live, (id) => ids.get(id), () => ({}), sub));
}

function errors() {
  const lines: string[] = [];
  return { lines, error: (msg: string) => void lines.push(msg) };
}

test('the image\'s catalogue on the default SIMULATOR_URL: production logs one error naming the channels', (t) => {
  const cat = catalogueOf('data/catalogue.json', { SIMULATOR_URL: 'http://127.0.0.1:8090' });
  const ids = simulatorChannels(cat);
  t.true(ids.length > 10);
  const log = errors();
  t.deepEqual(warnSimulatorChannels({ DEPLOYMENT_MODE: 'production' }, cat, log), ids);
  t.is(log.lines.length, 1);
  t.regex(log.lines[0], /PRODUCTION CHANNELS CALL THE SIMULATOR: \d+ enabled channel\(s\) have the base URL http:\/\/127\.0\.0\.1:8090/);
  t.regex(log.lines[0], /catalogue\.existingConfigMap/);
  const dev = errors();
  t.deepEqual(warnSimulatorChannels({ DEPLOYMENT_MODE: 'development' }, cat, dev), []);
  t.deepEqual(dev.lines, [], 'npm run dev is meant to call it');
});

test('compose\'s simulator service and the production catalogue raise nothing', (t) => {
  const compose = catalogueOf('data/catalogue.json', { SIMULATOR_URL: 'http://simulator:8090' });
  const log = errors();
  t.deepEqual(warnSimulatorChannels({ DEPLOYMENT_MODE: 'production' }, compose, log), []);
  const vars = new Proxy({}, { get: (_, name: string) => `https://${name.toLowerCase()}.example.com` }) as Record<string, string>;
  t.deepEqual(warnSimulatorChannels({ DEPLOYMENT_MODE: 'production' }, catalogueOf('deploy/production/catalogue.json', vars), log), []);
  t.deepEqual(log.lines, []);
});
