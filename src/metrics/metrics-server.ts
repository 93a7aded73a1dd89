/**
 * The HTTP edge for operators: /metrics (Prometheus text format), /healthz
 * (the process is alive and its event loop turns), /readyz (the pipeline
 * decides pages: src/consumers/consumer-health.ts says when). Nothing else
 * is served.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface MetricsServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(options: { host: string; port: number; registry: Registry; ready: () => boolean }): Promise<MetricsServer> {
  const { registry, ready } = options;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/metrics') {
      registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
        (error: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics collection failed: ${error.message}\n`),
      );
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}\n');
      return;
    }
    if (path === '/readyz') {
      const ok = ready();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(ok ? '{"status":"ready"}\n' : '{"status":"not ready"}\n');
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
