/**
 * A scriptable HTTPS server on 127.0.0.1:0 for the controller transport tests: a real CA, a serving
 * certificate, client certificates to authenticate with, and a kubeconfig whose client certificate
 * lives in files (so a test can rotate it). Each request is recorded with the peer certificate's CN
 * and its HTTP version, and TLS handshakes are counted. `start({ offerH2: true })` also offers HTTP/2 in
 * ALPN, as the API server does.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { KubeConfig } from '@kubernetes/client-node';
import { createCertificateAuthority, type CaMaterial } from '../../src/pki/ca.js';
import { issueCertificate } from '../../src/pki/issue.js';
import { generateKeyPair } from '../../src/pki/keys.js';

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** CN of the client certificate, when one was presented and verified. */
  clientCN?: string;
  /** '1.1' or '2.0'. */
  httpVersion: string;
}

export interface KubeUser {
  name: string;
  token?: string;
  certFile?: string;
  keyFile?: string;
  username?: string;
  password?: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, seen: Seen) => void;

async function leaf(ca: CaMaterial, commonName: string, server: boolean): Promise<{ certPem: string; keyPem: string }> {
  const key = generateKeyPair();
  const now = Date.now();
  const certPem = await issueCertificate(ca, {
    subject: { commonName },
    publicKeyPem: key.publicKeyPem,
    ipAddresses: server ? ['127.0.0.1'] : [],
    usages: ['digital signature', 'key encipherment', server ? 'server auth' : 'client auth'],
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 3_600_000),
  });
  return { certPem, keyPem: key.privateKeyPem };
}

export class FakeApiServer {
  readonly seen: Seen[] = [];
  handshakes = 0;
  handler: Handler = (_req, res) => res.end('{}');
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly url: string,
    readonly ca: CaMaterial,
    readonly dir: string,
    private readonly server: https.Server | http2.Http2SecureServer,
  ) {}

  static async start(opts: { offerH2?: boolean } = {}): Promise<FakeApiServer> {
    const ca = await createCertificateAuthority({ commonName: 'test-ca' });
    const serving = await leaf(ca, 'test-apiserver', true);
    const tls = { key: serving.keyPem, cert: serving.certPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false };
    const server = opts.offerH2 ? http2.createSecureServer({ ...tls, allowHTTP1: true }) : https.createServer(tls);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ctl-transport-'));
    const fake = new FakeApiServer(`https://127.0.0.1:${(server.address() as AddressInfo).port}`, ca, dir, server);
    server.on('secureConnection', (s: Socket) => {
      fake.handshakes++;
      fake.sockets.add(s);
      s.on('close', () => fake.sockets.delete(s));
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const socket = req.socket as TLSSocket;
        const seen: Seen = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          clientCN: socket.authorized ? (socket.getPeerCertificate().subject?.CN as string | undefined) : undefined,
          httpVersion: req.httpVersion,
        };
        fake.seen.push(seen);
        fake.handler(req, res, seen);
      });
    });
    return fake;
  }

  /** A new client certificate for `commonName`, signed by the server's CA. */
  clientCert(commonName: string): Promise<{ certPem: string; keyPem: string }> {
    return leaf(this.ca, commonName, false);
  }

  /** Writes the client certificate files the file-based kubeconfig points at. */
  writeClientCert(pair: { certPem: string; keyPem: string }): void {
    writeFileSync(path.join(this.dir, 'client.crt'), pair.certPem);
    writeFileSync(path.join(this.dir, 'client.key'), pair.keyPem);
  }

  /** A kubeconfig that trusts the CA and authenticates with the client certificate files (certFile/keyFile). */
  certFileKubeConfig(): KubeConfig {
    return this.kubeConfig({ name: 'user', certFile: path.join(this.dir, 'client.crt'), keyFile: path.join(this.dir, 'client.key') });
  }

  /** A kubeconfig that trusts the CA and sends a bearer token. */
  tokenKubeConfig(token: string): KubeConfig {
    return this.kubeConfig({ name: 'user', token });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** A kubeconfig that trusts the CA, for this user, with `cluster` added to its cluster entry. */
  kubeConfig(user: KubeUser, cluster: { proxyUrl?: string } = {}): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'test', server: this.url, caData: Buffer.from(this.ca.certPem).toString('base64'), skipTLSVerify: false, ...cluster }],
      users: [user],
      contexts: [{ name: 'test', cluster: 'test', user: 'user' }],
      currentContext: 'test',
    });
    return kc;
  }
}

/** Replies with a JSON body. */
export function json(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
