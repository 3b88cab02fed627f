/**
 * HTTP/2 on the secure port, as kube-apiserver serves it: ALPN h2 and http/1.1, one connection
 * carrying a client's requests and watches (client certificates, bootstrap tokens, TokenReview),
 * kubectl and curl on HTTP/2 while client-node stays on HTTP/1.1, streams reset alone (413, a
 * watch's timeout), stalled watchers closed and counted, and the limits after the rapid-reset
 * attacks: unauthenticated callers get GOAWAY, streams and running handlers per connection are
 * bounded.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import path from 'node:path';
import { promisify } from 'node:util';
import { constants, type ClientHttp2Session } from 'node:http2';
import { CoreV1Api } from '@kubernetes/client-node';
import { createLogger } from '../../src/log/logger.js';
import { CREDENTIAL_FILES } from '../../src/apiserver/server/credentials.js';
import type { Authenticator } from '../../src/apiserver/authentication/types.js';
import { h2connect, h2headers, h2request, h2response } from '../helpers/http2.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ADMIN_USER, staticTokenAuthenticator } from '../helpers/static-auth.js';

const run = promisify(execFile);

/** The protocols of the TLS connections the server accepted, from its debug log. */
class ConnectionLog {
  readonly protocols: string[] = [];
  readonly logger = createLogger({
    level: 'debug',
    destination: {
      write: (line: string) => {
        const record = JSON.parse(line) as { msg: string; protocol?: string };
        if (record.msg === 'TLS connection' && record.protocol) this.protocols.push(record.protocol);
      },
    },
  });
}

const adminTls = (s: TestServer): { ca: string; cert?: string; key?: string } =>
  'certPem' in s.admin ? { ca: s.caPem, cert: s.admin.certPem, key: s.admin.keyPem } : { ca: s.caPem };

const json = (value: unknown): { headers: Record<string, string>; body: string } => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });

/** Resolves with the GOAWAY's error code once the server sends one. */
const goaway = (session: ClientHttp2Session): Promise<number> => new Promise((resolve) => session.once('goaway', (code: number) => resolve(code)));

/** Waits `ms`, then says whether `p` settled meanwhile. */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  void p.then(() => (settled = true));
  await new Promise((r) => setTimeout(r, ms));
  return settled;
}

async function metric(s: TestServer, line: RegExp): Promise<number | undefined> {
  const m = line.exec((await raw(s, 'GET', '/metrics', { protocol: 'http/1.1' })).text);
  return m ? Number(m[1]) : undefined;
}

describe('HTTP/2 on the full server', () => {
  const log = new ConnectionLog();
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ logger: log.logger });
  });
  afterAll(() => s.close());

  it('offers h2 first and http/1.1, and speaks HTTP/1.1 to a client that offers no ALPN', async () => {
    const url = new URL(s.url);
    const negotiate = (ALPNProtocols: string[] | undefined): Promise<string | false> =>
      new Promise((resolve, reject) => {
        const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ca: s.caPem, ALPNProtocols }, () => {
          resolve(socket.alpnProtocol ?? false);
          socket.destroy();
        });
        socket.once('error', reject);
      });
    expect(await negotiate(['h2', 'http/1.1'])).toBe('h2');
    expect(await negotiate(['http/1.1', 'h2'])).toBe('h2');
    expect(await negotiate(['http/1.1'])).toBe('http/1.1');
    expect(await negotiate(undefined)).toBe(false);
    const r = await raw(s, 'GET', '/version', { anonymous: true, protocol: 'http/1.1' });
    expect(r.status).toBe(200);
  });

  it('serves kubectl and client-node on one HTTP/2 connection each, and node:https on HTTP/1.1', async () => {
    const before = log.protocols.length;
    const { stdout } = await run('kubectl', ['--kubeconfig', s.kubeconfigPath, '--cache-dir', path.join(s.dataDir, 'kubectl-cache'), 'get', 'namespaces', '-o', 'name'], { timeout: 30_000 });
    expect(stdout).toContain('namespace/default');
    // Discovery (/api, /apis, in parallel) and the list: every request of the command on one connection.
    expect(log.protocols.slice(before)).toEqual(['h2']);

    // client-node's undici offers h2 too.
    const mark = log.protocols.length;
    const core = s.kubeConfig.makeApiClient(CoreV1Api);
    // undici learns the protocol from its first connection, then multiplexes.
    expect((await core.listNamespace()).items.length).toBeGreaterThan(0);
    const lists = await Promise.all([core.listNamespace(), core.listNamespace(), core.listNamespace()]);
    for (const list of lists) expect(list.items.map((n) => n.metadata?.name)).toContain('default');
    expect(new Set(log.protocols.slice(mark))).toEqual(new Set(['h2']));

    const https = log.protocols.length;
    expect((await raw(s, 'GET', '/api/v1/namespaces', { protocol: 'http/1.1' })).status).toBe(200);
    expect(log.protocols.slice(https)).toEqual(['http/1.1']);
  });

  it('answers curl --http2 over HTTP/2', async () => {
    const ca = path.join(s.dataDir, CREDENTIAL_FILES.caPem);
    const { stdout } = await run('curl', ['--http2', '-sS', '--cacert', ca, '-o', '/dev/null', '-w', '%{http_version} %{http_code}', `${s.url}/version`], { timeout: 30_000 });
    expect(stdout).toBe('2 200');
  });

  it('carries a watch and concurrent writes on one connection, authenticated by its client certificate', async () => {
    const session = await h2connect(s.url, adminTls(s));
    try {
      const base = '/api/v1/namespaces/default/configmaps';
      const start = (await h2request(session, 'GET', base)).json.metadata.resourceVersion as string;
      const watch = session.request(h2headers('GET', `${base}?watch=1&resourceVersion=${start}`));
      const lines: string[] = [];
      let text = '';
      const arrived = new Promise<void>((resolve) =>
        watch.on('data', (c: Buffer) => {
          text += c.toString();
          const parts = text.split('\n');
          text = parts.pop()!;
          lines.push(...parts.filter((l) => l !== ''));
          if (lines.length >= 5) resolve();
        }),
      );
      const created = await Promise.all(
        Array.from({ length: 5 }, (_, i) => h2request(session, 'POST', base, json({ metadata: { name: `h2-${i}` }, data: { i: String(i) } }))),
      );
      expect(created.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
      await arrived;
      expect(lines.map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(['ADDED', 'ADDED', 'ADDED', 'ADDED', 'ADDED']);
      const whoami = await h2request(session, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', json({}));
      expect(whoami.status).toBe(201);
      expect(whoami.json.status.userInfo.groups).toContain('system:masters');
      watch.close(constants.NGHTTP2_CANCEL);
    } finally {
      session.close();
    }
  });

  it('sees each of several Impersonate-Group fields as its own group', async () => {
    const session = await h2connect(s.url, adminTls(s));
    try {
      const headers = { 'content-type': 'application/json', 'impersonate-user': 'jane', 'impersonate-group': ['team-a', 'team-b'] };
      const r = await h2request(session, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { headers, body: '{}' });
      expect(r.status).toBe(201);
      expect(r.json.status.userInfo).toMatchObject({ username: 'jane', groups: ['team-a', 'team-b', 'system:authenticated'] });
    } finally {
      session.close();
    }
  });

  it('authenticates a bootstrap token on HTTP/2 and reviews it through TokenReview', async () => {
    const admin = await h2connect(s.url, adminTls(s));
    const node = await h2connect(s.url, { ca: s.caPem });
    try {
      const secret = {
        metadata: { name: 'bootstrap-token-h2h2h2' },
        type: 'bootstrap.kubernetes.io/token',
        stringData: { 'token-id': 'h2h2h2', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' },
      };
      expect((await h2request(admin, 'POST', '/api/v1/namespaces/kube-system/secrets', json(secret))).status).toBe(201);
      const token = 'h2h2h2.0123456789abcdef';
      const who = await h2request(node, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: '{}',
      });
      expect(who.status).toBe(201);
      expect(who.json.status.userInfo).toMatchObject({ username: 'system:bootstrap:h2h2h2', groups: ['system:bootstrappers', 'system:authenticated'] });
      const review = await h2request(admin, 'POST', '/apis/authentication.k8s.io/v1/tokenreviews', json({ spec: { token } }));
      expect(review.status).toBe(201);
      expect(review.json.status).toMatchObject({ authenticated: true, user: { username: 'system:bootstrap:h2h2h2' } });
    } finally {
      admin.close();
      node.close();
    }
  });

  it('ends a timed-out watch and a too-large body on their streams only; the connection serves on', async () => {
    const session = await h2connect(s.url, adminTls(s));
    try {
      let away = false;
      session.once('goaway', () => (away = true));
      const watch = await h2response(session.request(h2headers('GET', '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1')));
      expect(watch.status).toBe(200);
      const big = await h2request(session, 'POST', '/api/v1/namespaces/default/configmaps', { headers: { 'content-type': 'application/json' }, body: Buffer.alloc(4 << 20, 'x') });
      expect(big.status).toBe(413);
      expect((await h2request(session, 'GET', '/api/v1/namespaces/default')).status).toBe(200);
      expect(away).toBe(false);
      expect(session.closed || session.destroyed).toBe(false);
    } finally {
      session.close();
    }
  });

  it('sends GOAWAY after an anonymous or unauthenticated request, not after an authenticated one', async () => {
    const anonymous = await h2connect(s.url, { ca: s.caPem });
    const anonymousAway = goaway(anonymous);
    expect((await h2request(anonymous, 'GET', '/version')).status).toBe(200);
    expect(await anonymousAway).toBe(constants.NGHTTP2_NO_ERROR);

    const badToken = await h2connect(s.url, { ca: s.caPem });
    const badAway = goaway(badToken);
    expect((await h2request(badToken, 'GET', '/api/v1/namespaces', { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    expect(await badAway).toBe(constants.NGHTTP2_NO_ERROR);

    const admin = await h2connect(s.url, adminTls(s));
    try {
      const adminAway = goaway(admin);
      expect((await h2request(admin, 'GET', '/version')).status).toBe(200);
      expect(await settlesWithin(adminAway, 200)).toBe(false);
    } finally {
      admin.close();
    }
  });

  it('reads a 60 KiB Authorization header from kubectl over HTTP/2 and answers 401', async () => {
    const kubeconfig = (token: string): string => {
      const file = path.join(s.dataDir, `kubeconfig-${token.length}`);
      const config = {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: s.url, 'certificate-authority': path.join(s.dataDir, CREDENTIAL_FILES.caPem) } }],
        users: [{ name: 'u', user: { token } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'c',
      };
      writeFileSync(file, JSON.stringify(config));
      return file;
    };
    const kubectl = (file: string): Promise<{ stderr: string }> => run('kubectl', ['--kubeconfig', file, 'get', '--raw', '/api/v1/namespaces'], { timeout: 30_000 }).catch((e: { stderr: string }) => e);
    const before = log.protocols.length;
    // nghttp2 ends the connection on one header field of about 100 KiB or more (docs/compatibility.md).
    const unknown = await kubectl(kubeconfig(randomBytes(45 * 1024).toString('base64')));
    expect(unknown.stderr).toMatch(/Unauthorized/);
    // Each 401 ends its connection (GOAWAY); kubectl asks again on a new one.
    expect(new Set(log.protocols.slice(before))).toEqual(new Set(['h2']));
  });

  it('serves a 16 MiB list and the other streams of its connection at the same time', async () => {
    const base = '/api/v1/namespaces/big/configmaps';
    expect((await raw(s, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'big' } } })).status).toBe(201);
    const value = 'v'.repeat(256 * 1024);
    for (let i = 0; i < 64; i += 16) {
      const batch = Array.from({ length: 16 }, (_, j) => raw(s, 'POST', base, { body: { metadata: { name: `cm-${i + j}` }, data: { v: value } } }));
      expect((await Promise.all(batch)).map((r) => r.status)).toEqual(Array(16).fill(201));
    }
    const session = await h2connect(s.url, adminTls(s));
    try {
      const [list, ...others] = await Promise.all([h2request(session, 'GET', base), ...Array.from({ length: 5 }, () => h2request(session, 'GET', '/api/v1/namespaces/big'))]);
      expect(list!.status).toBe(200);
      expect(list!.json.items.filter((i: { metadata: { name: string } }) => i.metadata.name.startsWith('cm-')).length).toBe(64);
      expect(list!.text.length).toBeGreaterThan(16 << 20);
      expect(others.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    } finally {
      session.close();
    }
  });

  it('closes watchers that stop reading their streams and counts them', async () => {
    const base = '/api/v1/namespaces/default/secrets';
    const stalled = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const session = await h2connect(s.url, adminTls(s));
        const stream = session.request(h2headers('GET', `${base}?watch=1`));
        await new Promise((resolve) => stream.once('response', resolve));
        stream.pause();
        return session;
      }),
    );
    const before = (await metric(s, /^apiserver_terminated_watchers_total\{group="",version="v1",resource="secrets"\} (\d+)$/m)) ?? 0;
    const value = Buffer.alloc(24 * 1024, 'v').toString('base64');
    for (let i = 0; i < 80; i += 10) {
      const batch = Array.from({ length: 10 }, (_, j) => raw(s, 'POST', base, { body: { metadata: { name: `big-${i + j}` }, data: { v: value } }, protocol: 'http/1.1' }));
      expect((await Promise.all(batch)).map((r) => r.status)).toEqual(Array(10).fill(201));
    }
    expect(await metric(s, /^apiserver_terminated_watchers_total\{group="",version="v1",resource="secrets"\} (\d+)$/m)).toBe(before + 5);
    expect(await metric(s, /^apiserver_registered_watchers\{group="",version="v1",kind="Secret"\} (\d+)$/m)).toBe(0);
    for (const session of stalled) session.destroy();
  }, 60_000);
});

describe('HTTP/2 limits and shutdown', () => {
  const token = 'h2-admin-token';
  const bearer = { authorization: `Bearer ${token}` };
  const tokenAuthenticator = (t: string): Authenticator => staticTokenAuthenticator(new Map([[t, ADMIN_USER]]));

  it('advertises --http2-max-streams-per-connection, 100 by default', async () => {
    for (const [option, expected] of [
      [undefined, 100],
      [0, 100],
      [7, 7],
    ] as const) {
      const s = await startTestServer({ authenticator: tokenAuthenticator(token), serving: { http2MaxStreamsPerConnection: option } });
      const session = await h2connect(s.url, { ca: s.caPem });
      try {
        // The server's SETTINGS come before its first response.
        expect((await h2request(session, 'GET', '/version', { headers: bearer })).status).toBe(200);
        expect(session.remoteSettings.maxConcurrentStreams).toBe(expected);
      } finally {
        session.close();
        await s.close();
      }
    }
  });

  it('runs at most the stream limit of handlers for a connection that resets its streams, and cuts it off past four times that', async () => {
    let inFlight = 0;
    let peak = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const slow: Authenticator = {
      async authenticate() {
        peak = Math.max(peak, ++inFlight);
        await gate;
        inFlight--;
        return ADMIN_USER;
      },
    };
    const s = await startTestServer({ authenticator: slow, serving: { http2MaxStreamsPerConnection: 10 } });
    const session = await h2connect(s.url, { ca: s.caPem });
    try {
      const away = goaway(session);
      // The rapid-reset pattern: open a stream, reset it at once, again and again.
      for (let i = 0; i < 60 && !session.destroyed && !session.closed; i++) {
        const stream = session.request(h2headers('GET', '/api/v1/namespaces', bearer));
        stream.on('error', () => undefined);
        stream.close(constants.NGHTTP2_CANCEL);
        await new Promise((r) => setImmediate(r));
      }
      expect(await away).toBe(constants.NGHTTP2_ENHANCE_YOUR_CALM);
      expect(peak).toBe(10);
    } finally {
      release();
      session.destroy();
      await s.close();
    }
  });

  it('sends GOAWAY after every request with --goaway-chance 1, letting the request finish', async () => {
    const s = await startTestServer({ authenticator: tokenAuthenticator(token), serving: { goawayChance: 1 } });
    const session = await h2connect(s.url, { ca: s.caPem });
    try {
      const away = goaway(session);
      expect((await h2request(session, 'GET', '/api/v1/namespaces', { headers: bearer })).status).toBe(200);
      expect(await away).toBe(constants.NGHTTP2_NO_ERROR);
    } finally {
      session.close();
      await s.close();
    }
  });

  it('offers only http/1.1 with --disable-http2-serving', async () => {
    const s = await startTestServer({ authenticator: tokenAuthenticator(token), serving: { disableHttp2: true } });
    try {
      const url = new URL(s.url);
      const protocol = await new Promise<string | false | null>((resolve, reject) => {
        const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ca: s.caPem, ALPNProtocols: ['h2', 'http/1.1'] }, () => {
          resolve(socket.alpnProtocol);
          socket.destroy();
        });
        socket.once('error', reject);
      });
      expect(protocol).toBe('http/1.1');
      expect((await raw(s, 'GET', '/api/v1/namespaces', { token, protocol: 'http/1.1' })).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('keeps watches out of the in-flight limit: with one read seat, five watches on a connection leave a GET its seat', async () => {
    const alice = staticTokenAuthenticator(new Map([[token, { username: 'alice', groups: ['system:authenticated'] }]]));
    const s = await startTestServer({ authenticator: alice, flowControl: { maxRequestsInflight: 1, maxMutatingRequestsInflight: 1, priorityAndFairness: false } });
    const session = await h2connect(s.url, { ca: s.caPem });
    try {
      const watches = await Promise.all(
        Array.from({ length: 5 }, async () => {
          const stream = session.request(h2headers('GET', '/api/v1/namespaces/default/configmaps?watch=1', bearer));
          const headers = await new Promise<Record<string, unknown>>((resolve) => stream.once('response', resolve));
          expect(headers[':status']).toBe(200);
          return stream;
        }),
      );
      expect((await h2request(session, 'GET', '/api/v1/namespaces', { headers: bearer })).status).toBe(200);
      for (const w of watches) w.close(constants.NGHTTP2_CANCEL);
    } finally {
      session.close();
      await s.close();
    }
  });

  it('answers a WebSocket client on HTTP/1.1, its token taken from Sec-WebSocket-Protocol', async () => {
    const s = await startTestServer({ tokenFile: `${token},bob,bob-uid,\n` });
    try {
      const url = new URL(s.url);
      const protocol = `base64url.bearer.authorization.k8s.io.${Buffer.from(token).toString('base64url')}`;
      const head = await new Promise<string>((resolve, reject) => {
        // A WebSocket client offers only http/1.1: an Upgrade cannot be sent over HTTP/2.
        const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ca: s.caPem, ALPNProtocols: ['http/1.1'] }, () => {
          expect(socket.alpnProtocol).toBe('http/1.1');
          socket.write(
            `GET /api HTTP/1.1\r\nHost: ${url.host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n` +
              `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: ${protocol}\r\n\r\n`,
          );
        });
        let text = '';
        socket.on('data', (c: Buffer) => {
          text += c.toString('latin1');
          if (text.includes('\r\n\r\n')) {
            resolve(text.slice(0, text.indexOf('\r\n')));
            socket.destroy();
          }
        });
        socket.once('error', reject);
      });
      // No path here speaks WebSocket: the request is served as a plain GET, authenticated (anonymous: 401).
      expect(head).toBe('HTTP/1.1 200 OK');
    } finally {
      await s.close();
    }
  });

  it('closes a connection idle for the idle timeout, but not one whose quiet watch is open', async () => {
    const s = await startTestServer({ authenticator: tokenAuthenticator(token), serving: { idleTimeoutMs: 300 } });
    const session = await h2connect(s.url, { ca: s.caPem });
    try {
      const closed = new Promise((resolve) => session.once('close', resolve));
      const watch = session.request(h2headers('GET', '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1', bearer));
      watch.resume();
      const ended = new Promise((resolve) => watch.once('close', resolve));
      // Three idle timeouts pass while the watch is open and silent; the connection stays.
      expect(await settlesWithin(ended, 900)).toBe(false);
      expect(session.closed || session.destroyed).toBe(false);
      await ended;
      const started = Date.now();
      await closed;
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      session.destroy();
      await s.close();
    }
  });

  it('resets a stream whose body is still arriving after the request timeout, and serves on', async () => {
    const s = await startTestServer({ authenticator: tokenAuthenticator(token), serving: { requestTimeoutMs: 300 } });
    const session = await h2connect(s.url, { ca: s.caPem });
    try {
      const slow = session.request(h2headers('POST', '/api/v1/namespaces/default/configmaps', { ...bearer, 'content-type': 'application/json' }));
      slow.on('error', () => undefined);
      slow.write('{"metadata": {"name": ');
      await new Promise((resolve) => slow.once('close', resolve));
      expect(slow.rstCode).toBe(constants.NGHTTP2_CANCEL);
      expect((await h2request(session, 'GET', '/api/v1/namespaces', { headers: bearer })).status).toBe(200);
      // A whole body within the timeout is served as ever.
      const created = await h2request(session, 'POST', '/api/v1/namespaces/default/configmaps', { headers: { ...bearer, 'content-type': 'application/json' }, body: '{"metadata": {"name": "quick"}}' });
      expect(created.status).toBe(201);
    } finally {
      session.close();
      await s.close();
    }
  });

  it('closes with GOAWAY: an open watch ends and close() returns promptly', async () => {
    const s = await startTestServer({ authenticator: tokenAuthenticator(token) });
    const session = await h2connect(s.url, { ca: s.caPem });
    const away = goaway(session);
    const watch = session.request(h2headers('GET', '/api/v1/namespaces/default/configmaps?watch=1', bearer));
    await new Promise((resolve) => watch.once('response', resolve));
    const ended = new Promise((resolve) => watch.once('close', resolve));
    watch.resume();
    const started = Date.now();
    await s.close();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await away).toBe(constants.NGHTTP2_NO_ERROR);
    await ended;
    session.destroy();
  });
});
