/**
 * A bare HTTP server that answers only what serveDiscovery answers (404 otherwise), with a
 * kubeconfig pointing at it: enough for kubectl's discovery and OpenAPI code paths, so they can be
 * tested against our documents without the full API server.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { serveDiscovery } from '../../src/apiserver/discovery/index.js';

export interface DiscoveryServer {
  kubeconfig: string;
  cacheDir: string;
  /** Every request line seen, e.g. `GET /apis?timeout=32s`. */
  requests: string[];
  close(): Promise<void>;
}

export async function startDiscoveryServer(): Promise<DiscoveryServer> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const answer = serveDiscovery({
      path: req.url ?? '/',
      accept: req.headers.accept ?? '',
      ifNoneMatch: req.headers['if-none-match'],
      host: req.headers.host,
    });
    if (!answer) {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"kind":"Status","apiVersion":"v1","code":404}');
      return;
    }
    res.writeHead(answer.status, answer.headers).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubectl-compat-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  fs.writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "http://127.0.0.1:' + port + '"}}]',
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: x, context: {cluster: c, user: u, namespace: default}}]',
      'current-context: x',
    ].join('\n'),
  );
  return {
    kubeconfig,
    cacheDir: path.join(dir, 'cache'),
    requests,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
