import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from '../logger';

/**
 * The metrics listener: `GET /metrics` in the Prometheus text format on its
 * own port (METRICS_PORT), apart from the public API, so a scrape never meets
 * the API's auth, limits or ingress, and a worker (which has no HTTP server)
 * serves it the same way. Loopback by default (METRICS_HOST).
 */
export async function serveMetrics(registry: Registry, port: number, host: string, log: Logger): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) => {
        log.error('metrics scrape failed', { err });
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  server.unref();
  const url = `http://${host}:${(server.address() as AddressInfo).port}/metrics`;
  log.info('metrics listening', { url });
  return { url, close: () => new Promise((r) => server.close(() => r())) };
}
