import test from 'ava';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConfigError, loadConfig } from '../../platform/config';
import { temporalConnectionOptions } from '../../platform/temporal';

/**
 * Temporal TLS / Temporal Cloud: the options the gateway's Connection and the worker's NativeConnection are both
 * built from (platform/temporal.ts temporalConnectionOptions), from TEMPORAL_TLS, the mTLS pair, the CA and
 * TEMPORAL_API_KEY; a contradiction or an unreadable file refuses the start with one line naming the variable.
 */
const run = promisify(execFile);
const BASE = { ADMIN_TOKEN: 'a'.repeat(16), KEY_ENCRYPTION_KEY: 'ab'.repeat(32), TEMPORAL_ADDRESS: 'ns.a1b2c.tmprl.cloud:7233' };
const options = (env: Record<string, string>) => temporalConnectionOptions(loadConfig({ ...BASE, ...env }));

function pemFiles(): { dir: string; cert: string; key: string; ca: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'temporal-tls-'));
  const file = (name: string, body: string) => (fs.writeFileSync(path.join(dir, name), body), path.join(dir, name));
  return { dir, cert: file('client.pem', 'CERT PEM'), key: file('client.key', 'KEY PEM'), ca: file('ca.pem', 'CA PEM') };
}

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig({ ...BASE, ...env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

test('no TLS variable: plaintext, as before (a self-hosted frontend inside the cluster)', (t) => {
  t.deepEqual(options({}), { address: BASE.TEMPORAL_ADDRESS });
  t.deepEqual(options({ TEMPORAL_TLS: 'off' }), { address: BASE.TEMPORAL_ADDRESS });
  t.deepEqual(options({ TEMPORAL_TLS: '' }), { address: BASE.TEMPORAL_ADDRESS });
});

test('TEMPORAL_TLS=on: TLS with the system roots', (t) => {
  t.deepEqual(options({ TEMPORAL_TLS: 'on' }), { address: BASE.TEMPORAL_ADDRESS, tls: true });
  t.deepEqual(options({ TEMPORAL_TLS: 'true' }), { address: BASE.TEMPORAL_ADDRESS, tls: true });
  t.deepEqual(options({ TEMPORAL_TLS: 'on', TEMPORAL_TLS_SERVER_NAME: 'temporal.internal' }), { address: BASE.TEMPORAL_ADDRESS, tls: { serverNameOverride: 'temporal.internal' } });
});

test('TEMPORAL_API_KEY (Temporal Cloud): TLS by itself, the key sent; TLS off with a key is refused', (t) => {
  t.deepEqual(options({ TEMPORAL_API_KEY: 'eyJ.key' }), { address: BASE.TEMPORAL_ADDRESS, tls: true, apiKey: 'eyJ.key' });
  t.deepEqual(problems({ TEMPORAL_API_KEY: 'eyJ.key', TEMPORAL_TLS: 'off' }), ['TEMPORAL_TLS: is off, but TEMPORAL_API_KEY implies TLS (unset TEMPORAL_TLS or set it on)']);
  t.deepEqual(problems({ TEMPORAL_TLS: 'maybe' }).length, 1);
});

test('mTLS: the certificate pair and the CA read from their files; a lone half of the pair is refused', (t) => {
  const f = pemFiles();
  try {
    const o = options({ TEMPORAL_TLS_CERT_FILE: f.cert, TEMPORAL_TLS_KEY_FILE: f.key, TEMPORAL_TLS_CA_FILE: f.ca });
    t.is(o.apiKey, undefined);
    const tls = o.tls as { clientCertPair: { crt: Buffer; key: Buffer }; serverRootCACertificate: Buffer };
    t.is(tls.clientCertPair.crt.toString(), 'CERT PEM');
    t.is(tls.clientCertPair.key.toString(), 'KEY PEM');
    t.is(tls.serverRootCACertificate.toString(), 'CA PEM');
    t.deepEqual((options({ TEMPORAL_TLS_CA_FILE: f.ca }).tls as { serverRootCACertificate: Buffer }).serverRootCACertificate.toString(), 'CA PEM');
    t.deepEqual(problems({ TEMPORAL_TLS_CERT_FILE: f.cert }), ['TEMPORAL_TLS_KEY_FILE is not set (needed with TEMPORAL_TLS_CERT_FILE (a client certificate is the pair); README.md, "Configuration")']);
    t.deepEqual(problems({ TEMPORAL_TLS: 'off', TEMPORAL_TLS_CA_FILE: f.ca }), ['TEMPORAL_TLS_CA_FILE: is set, but TEMPORAL_TLS is off']);
  } finally {
    fs.rmSync(f.dir, { recursive: true, force: true });
  }
});

for (const [what, entry] of [['worker', 'workers/main.ts'], ['gateway', 'gateway/server.ts']] as const) {
  test(`a wrong certificate path: the ${what} refuses to start with one line naming the variable and the path`, async (t) => {
    const f = pemFiles();
    try {
      const env = { PATH: process.env.PATH!, HOME: process.env.HOME!, ...BASE, TEMPORAL_TLS_CERT_FILE: '/nonexistent/temporal/client.pem', TEMPORAL_TLS_KEY_FILE: f.key, DEPLOYMENT_MODE: 'test' };
      const err = await t.throwsAsync(run(process.execPath, ['--import', 'tsx', entry], { env, timeout: 60_000 })) as Error & { code: number; stderr: string };
      t.is(err.code, 1);
      const lines = err.stderr.trim().split('\n');
      t.is(lines.length, 1, err.stderr);
      t.is(lines[0], `the ${what} cannot start: invalid configuration: TEMPORAL_TLS_CERT_FILE: cannot read /nonexistent/temporal/client.pem (ENOENT)`);
    } finally {
      fs.rmSync(f.dir, { recursive: true, force: true });
    }
  });
}
