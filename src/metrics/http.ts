/**
 * The probe and metrics endpoint: /metrics (Prometheus text from the injected registry), /healthz
 * (the process serves requests) and /readyz (every readiness check passes; 500 lists the failing ones,
 * in the style of the Kubernetes components' `[-]name failed` output).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from '../log/logger.js';

/** A named readiness check; returns true when ready. */
export interface ReadyCheck {
  name: string;
  check(): boolean;
}

export interface ProbeServerOptions {
  registry: Registry;
  logger: Logger;
  /** `host:port`, `:port` or `port`; port 0 picks a free one. */
  bindAddress: string;
  readyChecks: () => ReadyCheck[];
}

export interface ProbeServer {
  /** The actual `http://host:port` after binding. */
  url: string;
  close(): Promise<void>;
}

export function parseBindAddress(addr: string): { host: string | undefined; port: number } {
  const idx = addr.lastIndexOf(':');
  const host = idx > 0 ? addr.slice(0, idx).replace(/^\[|\]$/g, '') : undefined;
  return { host, port: Number(idx >= 0 ? addr.slice(idx + 1) : addr) };
}

function readyz(checks: ReadyCheck[], verbose: boolean): { code: number; body: string } {
  const results = checks.map((c) => ({ name: c.name, ok: safe(c) }));
  const failed = results.some((r) => !r.ok);
  if (!failed && !verbose) return { code: 200, body: 'ok' };
  const lines = results.map((r) => (r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`));
  return { code: failed ? 500 : 200, body: `${lines.join('\n')}\n${failed ? 'readyz check failed' : 'readyz check passed'}\n` };
}

function safe(c: ReadyCheck): boolean {
  try {
    return c.check();
  } catch {
    return false;
  }
}

export async function startProbeServer(opts: ProbeServerOptions): Promise<ProbeServer> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/metrics') {
      opts.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'Content-Type': opts.registry.contentType });
          res.end(text);
        },
        (err: unknown) => {
          opts.logger.error({ err }, 'metrics collection failed');
          res.writeHead(500).end();
        },
      );
      return;
    }
    if (url.pathname === '/healthz' || url.pathname === '/livez') {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
      return;
    }
    if (url.pathname === '/readyz') {
      const { code, body } = readyz(opts.readyChecks(), url.searchParams.has('verbose'));
      res.writeHead(code, { 'Content-Type': 'text/plain' }).end(body);
      return;
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
  });
  const { host, port } = parseBindAddress(opts.bindAddress);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${shownHost}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
