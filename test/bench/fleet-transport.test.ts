import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { closedByRotation, negotiatedProtocol, openTransport, secureContextFor, type Protocol } from '../../bench/lib/fleet-transport.js';
import { createCertificateAuthority } from '../../src/pki/ca.js';
import { issueCertificate } from '../../src/pki/issue.js';
import { generateKeyPair } from '../../src/pki/keys.js';

interface Pki {
  caPem: string;
  server: { cert: string; key: string };
  client: { certPem: string; keyPem: string };
  /** The same node's next client certificate (a rotation's). */
  next: { certPem: string; keyPem: string };
}

async function makePki(): Promise<Pki> {
  const ca = await createCertificateAuthority({ commonName: 'fleet-transport-test' });
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + 3_600_000);
  const issue = async (cn: string, usages: ('server auth' | 'client auth')[], ipAddresses: string[] = []): Promise<{ certPem: string; keyPem: string }> => {
    const { privateKeyPem, publicKeyPem } = generateKeyPair();
    const certPem = await issueCertificate(ca, { subject: { commonName: cn }, publicKeyPem, ipAddresses, usages: ['digital signature', ...usages], notBefore, notAfter });
    return { certPem, keyPem: privateKeyPem };
  };
  const server = await issue('server', ['server auth'], ['127.0.0.1']);
  return { caPem: ca.certPem, server: { cert: server.certPem, key: server.keyPem }, client: await issue('system:node:n1', ['client auth']), next: await issue('system:node:n1-next', ['client auth']) };
}

/**
 * A server as the API server's secure port: ALPN h2 and http/1.1 (or http/1.1 only), a client
 * certificate asked for, answering every request with who asked and on which protocol, a watch
 * path that streams until the client goes away, a path never answered. It counts TLS connections and h2 sessions.
 */
async function startServer(pki: Pki, h2: boolean, port = 0) {
  const seen = { connections: 0, sessions: [] as http2.ServerHttp2Session[], requests: [] as string[] };
  const options = { ca: pki.caPem, ...pki.server, requestCert: true, rejectUnauthorized: false };
  // node:http2's compatibility API mirrors node:http's for what this handler uses.
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const cn = (req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? 'anonymous';
    seen.requests.push(`${req.httpVersion} ${req.method} ${req.url} ${cn}`);
    if (req.url?.startsWith('/watch')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"ADDED","object":{}}\n');
      return;
    }
    if (req.url === '/hold') return;
    if (req.url === '/throttled') {
      res.writeHead(429, { 'retry-after': '1' });
      res.end('{}');
      return;
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ cn, body }));
    });
  };
  const server = h2 ? http2.createSecureServer({ ...options, allowHTTP1: true }, handler as unknown as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void) : https.createServer(options, handler);
  server.on('secureConnection', () => seen.connections++);
  if (h2) server.on('session', (s: http2.ServerHttp2Session) => seen.sessions.push(s));
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = async (): Promise<void> => {
    for (const s of seen.sessions) s.destroy();
    server.close();
    (server as https.Server).closeAllConnections?.();
    await once(server, 'close');
  };
  return { url, seen, close };
}

describe('the fleet simulator transport', () => {
  let pki: Pki;
  beforeAll(async () => {
    pki = await makePki();
  });

  it.each([
    [true, 'h2'],
    [false, 'http/1.1'],
  ] as [boolean, Protocol][])('asks the server which protocol it speaks (h2 offered: %s)', async (h2, expected) => {
    const server = await startServer(pki, h2);
    try {
      expect(await negotiatedProtocol(server.url, pki.caPem)).toBe(expected);
    } finally {
      await server.close();
    }
  });

  it('over h2: one connection carries every request and watch of a credential, as client-go', async () => {
    const server = await startServer(pki, true);
    let connects = 0;
    const t = openTransport({ url: server.url, caPem: pki.caPem, protocol: 'h2' }, pki.client, () => connects++);
    try {
      const abort = [new AbortController(), new AbortController()];
      const watches = await Promise.all(abort.map((a, i) => t.stream(`/watch/${i}`, {}, a.signal)));
      expect(watches.map((w) => w.status)).toEqual([200, 200]);
      const replies = await Promise.all([1, 2, 3].map((i) => t.request('POST', `/objects/${i}`, { 'content-type': 'application/json' }, `{"n":${i}}`)));
      expect(replies.map((r) => [r.status, JSON.parse(r.text)])).toEqual([1, 2, 3].map((i) => [200, { cn: 'system:node:n1', body: `{"n":${i}}` }]));
      expect((await t.request('GET', '/throttled', {})).retryAfter).toBe('1');
      for (const a of abort) a.abort();
      expect(connects).toBe(1);
      expect(server.seen.connections).toBe(1);
      expect(server.seen.requests.every((r) => r.startsWith('2.0 '))).toBe(true);
    } finally {
      t.close(true);
      await server.close();
    }
  });

  it('over h2: a dial nobody answers fails with the connect error, shared by the requests that waited on it; the next dial connects', async () => {
    const gone = await startServer(pki, true);
    const port = Number(new URL(gone.url).port);
    await gone.close();
    let connects = 0;
    const t = openTransport({ url: gone.url, caPem: pki.caPem, protocol: 'h2' }, pki.client, () => connects++);
    try {
      const refused = await Promise.allSettled([1, 2, 3].map((i) => t.request('GET', `/objects/${i}`, {})));
      expect(refused.map((r) => r.status === 'rejected' && (r.reason as NodeJS.ErrnoException).code)).toEqual(['ECONNREFUSED', 'ECONNREFUSED', 'ECONNREFUSED']);
      expect(connects).toBe(1);
      const server = await startServer(pki, true, port);
      try {
        const reply = await t.request('GET', '/objects/4', {});
        expect([reply.status, JSON.parse(reply.text).cn]).toEqual([200, 'system:node:n1']);
        expect([connects, server.seen.connections]).toEqual([2, 1]);
      } finally {
        await server.close();
      }
    } finally {
      t.close(true);
    }
  });

  it('builds a TLS context once per credential (the CA alone once), and it still checks the server against the CA', async () => {
    expect(secureContextFor(pki.caPem, {})).toBe(secureContextFor(pki.caPem, {}));
    expect(secureContextFor(pki.caPem, pki.client)).not.toBe(secureContextFor(pki.caPem, pki.client));
    const other = await makePki();
    const server = await startServer(pki, true);
    try {
      for (const protocol of ['h2', 'http/1.1'] as const) {
        // A server whose certificate another CA issued is refused, with or without a client certificate.
        for (const creds of [{}, other.client]) {
          const t = openTransport({ url: server.url, caPem: other.caPem, protocol }, creds, () => undefined);
          await expect(t.request('GET', '/a', {})).rejects.toThrow();
          t.close(true);
        }
        // The CA-only context serves every bootstrap transport; the server sees no client certificate.
        for (let i = 0; i < 2; i++) {
          const t = openTransport({ url: server.url, caPem: pki.caPem, protocol }, {}, () => undefined);
          expect(JSON.parse((await t.request('GET', '/b', {})).text)).toEqual({ cn: 'anonymous', body: '' });
          t.close(true);
        }
      }
    } finally {
      await server.close();
    }
  });

  // SIG Scalability's latency starts when the server gets the request: the handshakes before it are told apart.
  it.each(['h2', 'http/1.1'] as const)('over %s: the first request tells how long it waited for its connection; the next waits for none', async (protocol) => {
    const server = await startServer(pki, protocol === 'h2');
    const t = openTransport({ url: server.url, caPem: pki.caPem, protocol }, pki.client, () => undefined);
    try {
      const started = performance.now();
      const first = await t.request('GET', '/a', {});
      const elapsed = performance.now() - started;
      expect(first.status).toBe(200);
      expect(first.connectWaitMs).toBeGreaterThan(0);
      expect(first.connectWaitMs).toBeLessThan(elapsed);
      expect((await t.request('GET', '/b', {})).connectWaitMs).toBe(0);
    } finally {
      t.close(true);
      await server.close();
    }
  });

  it('over h2: after a GOAWAY the next request opens a new connection; closing cancels the watches', async () => {
    const server = await startServer(pki, true);
    let connects = 0;
    const t = openTransport({ url: server.url, caPem: pki.caPem, protocol: 'h2' }, pki.client, () => connects++);
    try {
      expect((await t.request('GET', '/a', {})).status).toBe(200);
      // The server closing its side gracefully (a GOAWAY, then the connection ends once idle).
      const first = server.seen.sessions[0]!;
      first.close();
      await once(first, 'close');
      expect((await t.request('GET', '/b', {})).status).toBe(200);
      expect([connects, server.seen.connections, server.seen.sessions.length]).toEqual([2, 2, 2]);
      const watch = await t.stream('/watch/x', {}, new AbortController().signal);
      const chunks: string[] = [];
      const reading = (async () => {
        for await (const c of watch.body) chunks.push(c.toString());
      })();
      const second = server.seen.sessions[1]!;
      t.close();
      await reading;
      await once(second, 'close');
      expect(chunks.join('')).toContain('ADDED');
    } finally {
      t.close(true);
      await server.close();
    }
  });

  // kubelet's certificate transport: its dialer closes every connection at once (CloseAll) and the next
  // handshakes present the new certificate. A request sent in the same turn as the rotation once went
  // out on a transport already closed ("transport closed", an error of the fleet's rotation wave).
  it.each(['h2', 'http/1.1'] as const)('over %s: a rotation fails what runs on the open connections as closed by rotation, and the next requests present the new certificate', async (protocol) => {
    const server = await startServer(pki, protocol === 'h2');
    let connects = 0;
    const t = openTransport({ url: server.url, caPem: pki.caPem, protocol }, pki.client, () => connects++);
    const failure = (p: Promise<unknown>): Promise<unknown> => p.then(() => 'answered', (err: unknown) => err);
    try {
      const watch = await t.stream('/watch/x', {}, new AbortController().signal);
      const reading = failure(
        (async () => {
          for await (const chunk of watch.body) void chunk;
        })(),
      );
      const held = failure(t.request('GET', '/hold', {}));
      while (!server.seen.requests.some((r) => r.includes('/hold'))) await new Promise((r) => setTimeout(r, 10));
      const sameTurn = failure(t.request('PUT', '/lease', { 'content-type': 'application/json' }, '{}'));
      t.rotate(pki.next);
      for (const err of await Promise.all([reading, held, sameTurn])) expect([closedByRotation(err), String(err)]).toEqual([true, 'Error: connection closed by the client certificate rotation']);
      expect(JSON.parse((await t.request('GET', '/after', {})).text)).toEqual({ cn: 'system:node:n1-next', body: '' });
      // h2: one connection per certificate; HTTP/1.1: the watch's, then one for requests per certificate.
      expect(connects).toBe(protocol === 'h2' ? 2 : 3);
      expect(server.seen.requests.filter((r) => r.includes('/after'))).toHaveLength(1);
    } finally {
      t.close(true);
      await server.close();
    }
  });

  it.each([false, true])('over HTTP/1.1 (a server without h2, or --http1; h2 offered: %s): a connection for requests and one per watch', async (h2) => {
    const server = await startServer(pki, h2);
    let connects = 0;
    const t = openTransport({ url: server.url, caPem: pki.caPem, protocol: 'http/1.1' }, pki.client, () => connects++);
    try {
      const abort = [new AbortController(), new AbortController()];
      await Promise.all(abort.map((a, i) => t.stream(`/watch/${i}`, {}, a.signal)));
      for (const i of [1, 2, 3]) expect(JSON.parse((await t.request('GET', `/o/${i}`, {})).text)).toEqual({ cn: 'system:node:n1', body: '' });
      for (const a of abort) a.abort();
      expect(connects).toBe(3);
      expect(server.seen.connections).toBe(3);
      expect(server.seen.requests.every((r) => r.startsWith('1.1 '))).toBe(true);
    } finally {
      t.close(true);
      await server.close();
    }
  });
});
