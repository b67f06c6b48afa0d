// Legacy import accepts exactly the key shapes authentication accepts (domain/api-key.ts KEY_PATTERN): each
// accepted shape is imported and then authenticates; every other shape is a 400 naming `key` (before, any 16-512
// character key was stored with 201 and refused with 401 forever).
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { startGateway, type TestGateway } from '../helpers/stack';

let gw: TestGateway;
let accountId: string;
test.before(async () => {
  gw = await startGateway();
  accountId = (await gw.newAccount()).id;
});
test.after.always(async () => gw?.close());

const hex = () => randomBytes(32).toString('hex');
const balance = (key: string) => fetch(`${gw.url}/v1/key/balance`, { headers: { authorization: `Bearer ${key}` } });

test('every shape authentication accepts imports and then authenticates', async (t) => {
  const accepted = [
    `sk-${gw.config.KEY_SERVICE_TAG}-${hex()}`, // this deployment's tag
    `sk-legacy01-${hex()}`, // another deployment's tag: letters and digits
    `sk-abcdefgh-${hex()}`, // letters only
    `sk-01234567-${hex()}`, // digits only
    `sk-mgateway-${'0'.repeat(64)}`, // hex digits only
    `sk-mgateway-${'f'.repeat(64)}`, // hex letters only
  ];
  for (const key of accepted) {
    const r = await gw.admin('POST', `/accounts/${accountId}/keys/import-legacy`, { name: 'old', key });
    t.is(r.status, 201, `${key}: ${JSON.stringify(r.body)}`);
    const res = await balance(key);
    t.is(res.status, 200, key);
    await res.body?.cancel();
  }
});

test('every other shape is a 400 naming key, and nothing is stored', async (t) => {
  const refused = [
    'sk-legacy-0123456789abcdef0123', // the example
    `sk-legacy-${hex()}`, // 6-character tag
    `sk-legacy012-${hex()}`, // 9-character tag
    `sk-LEGACY01-${hex()}`, // upper-case tag
    `sk-legacy01-${hex().toUpperCase()}`, // upper-case hex
    `sk-legacy01-${hex().slice(0, 63)}`, // 63 hex
    `sk-legacy01-${hex()}0`, // 65 hex
    `sk-legacy01-${hex()} `, // trailing space
    `pk-legacy01-${hex()}`,
    `${hex()}${hex()}`,
  ];
  const before = (await gw.admin('GET', `/accounts/${accountId}/keys`)).body.data.length;
  for (const key of refused) {
    const r = await gw.admin('POST', `/accounts/${accountId}/keys/import-legacy`, { name: 'old', key });
    t.is(r.status, 400, key);
    t.is(r.body.error.param, 'key', key);
  }
  t.is((await gw.admin('GET', `/accounts/${accountId}/keys`)).body.data.length, before);
});
