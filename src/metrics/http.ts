/**
 * The probe and metrics endpoint: /metrics (Prometheus text from the injected registry), /healthz
 * (the process serves requests) and /readyz (every readiness check passes; 500 lists the failing ones,
 * in the style of the Kubernetes components' `[-]name failed` output).
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from '../log/logger.js';
import type { ServingTls } from '../pki/serving-cert-files.js';

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
  /**
   * Serve HTTPS and ask `authorize` before /metrics, as controller-runtime's secure metrics server
   * does; the probes stay open to anyone, as kube-controller-manager's always-allowed paths.
   */
  secure?: { tls: ServingTls; authorize(req: IncomingMessage, path: string): Promise<MetricsAccess> };
}

export type MetricsAccess = { allowed: true } | { allowed: false; code: 401 | 403; message: string };

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

/** /metrics, after the access check when the server is secure. */
function serveMetrics(opts: ProbeServerOptions, req: IncomingMessage, res: ServerResponse, path: string): void {
  const access = opts.secure ? opts.secure.authorize(req, path) : Promise.resolve<MetricsAccess>({ allowed: true });
  access
    .then(async (decision) => {
      if (!decision.allowed) {
        res.writeHead(decision.code, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`${decision.message}\n`);
        return;
      }
      const text = await opts.registry.metrics();
      res.writeHead(200, { 'Content-Type': opts.registry.contentType });
      res.end(text);
    })
    .catch((err: unknown) => {
      opts.logger.error({ err }, 'metrics collection failed');
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
}

/** HTTPS with the endpoint's TLS settings, taking each new pair of its certificate files. */
function secureServer(tls: ServingTls, handler: RequestListener, logger: Logger): HttpsServer {
  const server = createHttpsServer(tls.contextOptions(), handler);
  tls.attach(server, (err) => logger.error({ err }, 'metrics serving certificate files changed but cannot be used: the previous pair keeps serving'));
  return server;
}

export async function startProbeServer(opts: ProbeServerOptions): Promise<ProbeServer> {
  const handler: RequestListener = (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/metrics') {
      serveMetrics(opts, req, res, url.pathname);
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
  };
  const tls = opts.secure?.tls;
  const server: Server = tls ? secureServer(tls, handler, opts.logger) : createServer(handler);
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
    url: `${tls ? 'https' : 'http'}://${shownHost}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        tls?.stop();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
