// `npm run redis:cluster`: a throw-away local 3-node Redis Cluster (Debian's
// redis-server) until Ctrl-C; prints the REDIS_CLUSTER_NODES to point a
// gateway, a worker or `npm test` at it.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedisCluster } from './lib/redis-cluster';
import { stopAll } from './lib/proc';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dataDir = path.join(root, '.data', `redis-cluster-${Date.now()}`);
const cluster = await startRedisCluster({ dataDir, basePort: Number(process.env.REDIS_CLUSTER_PORT ?? 7001) });
console.log(`REDIS_CLUSTER_NODES=${cluster.nodes}\n(data in ${path.relative(root, dataDir)}; Ctrl-C stops it)`);
const stop = async () => {
  await cluster.stop();
  await stopAll();
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
setInterval(() => {}, 1 << 30);
