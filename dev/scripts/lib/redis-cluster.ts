// A local Redis Cluster of three masters from Debian's redis-server
// (`--cluster-enabled yes`) joined with `redis-cli --cluster create`, data
// and logs under dataDir. Used by `npm test` (the wallet, auth and limiter
// tests run against it as well as against one Redis) and by
// `npm run redis:cluster` for a manual look.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster } from 'ioredis';
import { portInUse, spawnManaged, tailFile, type Managed } from './proc';
import { ensureTools } from './tools';

const run = promisify(execFile);
const NODES = 3;
/** The cluster bus listens on port + 10000. */
const BUS_OFFSET = 10_000;
const READY_TIMEOUT_MS = 60_000;

export interface RedisCluster {
  /** `host:port,host:port,host:port` (REDIS_CLUSTER_NODES). */
  nodes: string;
  stop(): Promise<void>;
}

export async function startRedisCluster(opts: { dataDir: string; basePort?: number; log?: (l: string) => void }): Promise<RedisCluster> {
  const log = opts.log ?? console.log;
  const tools = await ensureTools({ need: { temporal: false, ferretdb: false, redis: true }, log });
  const server = tools.redisServer!;
  const cli = path.join(path.dirname(server), 'redis-cli');
  if (!fs.existsSync(cli)) throw new Error(`redis-cli not found next to ${server} (Debian's redis-tools)`);
  const ports = await freeClusterPorts(opts.basePort ?? 17001);
  const started: Managed[] = [];
  const stop = async () => {
    await Promise.all(started.splice(0).map((m) => m.stop()));
  };
  try {
    for (const port of ports) {
      const dir = path.join(opts.dataDir, `redis-cluster-${port}`);
      fs.mkdirSync(dir, { recursive: true });
      started.push(
        spawnManaged({
          name: `redis-${port}`,
          cmd: server,
          args: [
            '--bind', '127.0.0.1', '--port', String(port), '--dir', dir,
            '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '5000',
            '--appendonly', 'yes', '--save', '', '--daemonize', 'no', '--protected-mode', 'yes',
          ],
          logFile: path.join(opts.dataDir, 'logs', `redis-cluster-${port}.log`),
          cwd: dir,
        }),
      );
    }
    for (const [i, port] of ports.entries()) await waitFor(`redis-${port}`, started[i], () => cliPing(cli, port));
    await run(cli, ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
    const nodes = ports.map((p) => `127.0.0.1:${p}`).join(',');
    await waitFor('redis cluster', undefined, () => clusterReady(ports));
    log(`  redis cluster: ${nodes}`);
    return { nodes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function freeClusterPorts(base: number): Promise<number[]> {
  const ports: number[] = [];
  for (let p = base; ports.length < NODES && p < base + 2000; p++) {
    if (!(await portInUse(p)) && !(await portInUse(p + BUS_OFFSET))) ports.push(p);
  }
  if (ports.length < NODES) throw new Error(`no ${NODES} free port pairs (port and port + ${BUS_OFFSET}) from ${base}`);
  return ports;
}

async function cliPing(cli: string, port: number): Promise<void> {
  const { stdout } = await run(cli, ['-p', String(port), 'ping']);
  if (!stdout.includes('PONG')) throw new Error(`ping answered ${stdout}`);
}

/** Every node says the cluster is ok and a client can write a key of every node. */
async function clusterReady(ports: number[]): Promise<void> {
  const c = new Cluster(ports.map((port) => ({ host: '127.0.0.1', port })), { clusterRetryStrategy: () => null, redisOptions: { maxRetriesPerRequest: 0 } });
  c.on('error', () => {});
  try {
    const info = (await c.cluster('INFO')) as string;
    if (!info.includes('cluster_state:ok')) throw new Error('cluster_state is not ok yet');
    for (let i = 0; i < 8; i++) await c.set(`{probe${i}}`, '1', 'EX', 5);
  } finally {
    c.disconnect();
  }
}

async function waitFor(name: string, proc: Managed | undefined, probe: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last: unknown;
  for (;;) {
    if (proc?.done()) throw new Error(`${name} exited during start; ${proc.logFile}:\n${tailFile(proc.logFile)}`);
    try {
      await probe();
      return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${name} not ready within ${READY_TIMEOUT_MS / 1000} s: ${String(last)}`);
    await sleep(200);
  }
}
