/**
 * --tls-front-workers: threads accept and do TLS, the main thread serves the plaintext they hand
 * over. Client certificates still authenticate over HTTP/1.1 and HTTP/2, the client's address
 * reaches the audit log, watches stream, close() ends the fronted connections, and nobody but the
 * server's own fronts can hand it a connection with a chain of their choosing. (Every suite can run
 * fronted: KUBE_IDENTITY_TEST_FRONTS=2, test/helpers/server.ts.)
 */
import { randomBytes } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import os from 'node:os';
import { connect as tlsConnect } from 'node:tls';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { encodeConnection, readPreamble, SECRET_BYTES } from '../../src/apiserver/server/front-preamble.js';
import { BACK_SOCKETS, startFronts } from '../../src/apiserver/server/fronts.js';
import { ensureCredentials } from '../../src/apiserver/server/credentials.js';
import { servingTls } from '../../src/pki/serving-cert-files.js';
import { createLogger } from '../../src/log/logger.js';
import { kill9, startApiserverChild } from '../helpers/cli.js';
import { openWatch, raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import { byId, eventsWhen, logAudit } from '../audit/helpers.js';

/** The fronts' socket directories this process holds now. */
const frontDirs = (): string[] =>
  readdirSync(os.tmpdir())
    .filter((d) => d.startsWith('kube-identity-fronts-'))
    .map((d) => path.join(os.tmpdir(), d));

/** A port of /proc/net/tcp's `address:port` (hexadecimal). */
const portOf = (address: string | undefined): number => Number.parseInt(address?.split(':')[1] ?? '', 16);

/**
 * TCP_NODELAY of this process's own socket for the connection from 127.0.0.1:`clientPort` to
 * `serverPort` (a front thread's, threads sharing the process's descriptors), read by getsockopt in
 * a child given that descriptor: Node has no getter. Perl, as Debian's essential perl-base has it.
 */
function serverNoDelay(serverPort: number, clientPort: number): string {
  const row = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find((f) => portOf(f[1]) === serverPort && portOf(f[2]) === clientPort);
  const socket = `socket:[${row?.[9]}]`;
  const fd = readdirSync('/proc/self/fd').find((d) => {
    try {
      return readlinkSync(`/proc/self/fd/${d}`) === socket;
    } catch {
      return false;
    }
  });
  if (fd === undefined) throw new Error(`no descriptor of this process holds the connection from port ${clientPort}`);
  const perl = 'use Socket qw(IPPROTO_TCP TCP_NODELAY); open(my $s, "+<&=", 3) or die $!; print unpack("i", getsockopt($s, IPPROTO_TCP, TCP_NODELAY) // die $!);';
  const out = spawnSync('perl', ['-e', perl], { stdio: ['ignore', 'pipe', 'pipe', Number(fd)], encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`perl: ${out.error?.message ?? out.stderr}`);
  return out.stdout;
}

describe('a server behind TLS fronts', () => {
  const FRONTS = 2;
  let s: TestServer;
  let auditLog: string;
  let dir: string;
  let dirsBefore: string[];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tls-fronts-'));
    writeFileSync(path.join(dir, 'policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
    auditLog = path.join(dir, 'audit.log');
    dirsBefore = frontDirs();
    s = await startTestServer({ audit: logAudit(path.join(dir, 'policy.yaml'), auditLog), serving: { tlsFrontWorkers: FRONTS } });
  });
  afterAll(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['http/1.1', 'h2'] as const)('authenticates the admin client certificate over %s, the client address in its audit event', async (protocol) => {
    const r = await raw(s, 'GET', '/api/v1/namespaces', { protocol });
    expect(r.status).toBe(200);
    const id = String(r.headers['audit-id']);
    const [event] = byId(await eventsWhen(auditLog, (evs) => byId(evs, id).length > 0), id);
    expect(event?.user.username).toBe('kubernetes-admin');
    expect(event?.user.groups).toContain('system:masters');
    expect(event?.sourceIPs).toEqual(['127.0.0.1']);
  });

  it('streams a watch', async () => {
    const watch = await openWatch(s, '/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3Dfronted');
    try {
      expect((await raw(s, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'fronted' } } })).status).toBe(201);
      const [added] = await watch.waitFor(1);
      expect([added.type, added.object.metadata.name]).toEqual(['ADDED', 'fronted']);
    } finally {
      watch.close();
    }
  });

  it('answers a body too large with its 413 every time, though the connection closes with the body unread', async () => {
    // The back closed such a connection by destroying its unix socket with the body unread; that
    // reset the front's side, and about one time in three the front lost the answer (ECONNRESET).
    const big = 'x'.repeat(3 * 1024 * 1024 + 10);
    const answers: string[] = [];
    for (let i = 0; i < 20; i++) {
      answers.push(
        await raw(s, 'POST', '/api/v1/namespaces/default/serviceaccounts', { body: big }).then(
          (r) => `${r.status} ${r.headers.connection}`,
          (err: NodeJS.ErrnoException) => String(err.code),
        ),
      );
    }
    expect(answers).toEqual(Array(20).fill('413 close'));
  });

  it.each(['http/1.1', 'h2'])('turns Nagle\'s algorithm off on a fronted %s connection, as node:http does on its own', async (protocol) => {
    // With it on, HTTP/2's small frames waited for the client's delayed ACK (7x slower).
    const port = Number(new URL(s.url).port);
    const client = tlsConnect({ host: '127.0.0.1', port, ca: s.caPem, ALPNProtocols: [protocol] });
    try {
      await new Promise((resolve, reject) => client.once('secureConnect', resolve).once('error', reject));
      expect(client.alpnProtocol).toBe(protocol);
      expect(serverNoDelay(port, client.localPort!)).toBe('1');
    } finally {
      client.destroy();
    }
  });

  it('refuses a connection to its fronts\' socket that claims system:masters without the secret', async () => {
    const [socketDir] = frontDirs().filter((d) => !dirsBefore.includes(d));
    expect(socketDir).toBeDefined();
    // Private to this process's user: nobody else can even reach the socket.
    const st = statSync(socketDir!);
    expect([st.mode & 0o777, st.uid]).toEqual([0o700, process.getuid!()]);
    const adminDer = new Uint8Array(new X509Certificate((s.admin as { certPem: string }).certPem).raw);
    const forged = Buffer.concat([randomBytes(SECRET_BYTES), encodeConnection({ chain: [adminDer], remoteAddress: '10.0.0.1', remotePort: 1, protocol: 'http/1.1' })]);
    // The back listens on several sockets: each must refuse it.
    const sockets = readdirSync(socketDir!).filter((name) => name.endsWith('.sock'));
    expect(sockets).toHaveLength(BACK_SOCKETS);
    const answers = await Promise.all(
      sockets.map(async (name) => {
        const socket = connect(path.join(socketDir!, name));
        let answer = '';
        socket.on('data', (d: Buffer) => (answer += d.toString()));
        socket.write(Buffer.concat([forged, Buffer.from('GET /api/v1/namespaces/kube-system/secrets HTTP/1.1\r\nHost: x\r\n\r\n')]));
        await new Promise((resolve) => socket.once('close', resolve));
        return answer;
      }),
    );
    expect(answers).toEqual(Array(BACK_SOCKETS).fill(''));
  });

  it('hands its connections to the back over every one of its sockets, so the back accepts as many per loop turn', async () => {
    // libuv accepts one connection per listening socket per loop turn: over one socket, a busy back
    // took one handed-over connection per turn, and the rest waited with their requests sent.
    const [socketDir] = frontDirs().filter((d) => !dirsBefore.includes(d));
    const port = Number(new URL(s.url).port);
    const clients = Array.from({ length: 2 * BACK_SOCKETS }, () => tlsConnect({ host: '127.0.0.1', port, ca: s.caPem, ALPNProtocols: ['http/1.1'] }));
    try {
      await Promise.all(clients.map((c) => new Promise((resolve, reject) => c.once('secureConnect', resolve).once('error', reject))));
      // Each connection the back accepted on one of its sockets is listed connected (state 03) with
      // that socket's path in /proc/net/unix. Each front keeps a connection open to every socket (a
      // spare, or one a client took, then replaced in turn), and each client's connection is one more.
      const spread = (): { sockets: number; connections: number } => {
        const counts = new Map<string, number>();
        for (const line of readFileSync('/proc/net/unix', 'utf8').split('\n')) {
          const fields = line.trim().split(/\s+/);
          if (fields[5] === '03' && fields[7]?.startsWith(`${socketDir!}/`)) counts.set(fields[7], (counts.get(fields[7]) ?? 0) + 1);
        }
        const each = [...counts.values()];
        return { sockets: each.filter((n) => n >= FRONTS).length, connections: each.reduce((a, b) => a + b, 0) };
      };
      const expected = { sockets: BACK_SOCKETS, connections: FRONTS * BACK_SOCKETS + clients.length };
      await until('every back socket in use, every client relayed', () => {
        const now = spread();
        return now.sockets === expected.sockets && now.connections >= expected.connections;
      });
      const now = spread();
      expect(now.sockets).toBe(expected.sockets);
      expect(now.connections).toBeGreaterThanOrEqual(expected.connections);
    } finally {
      for (const c of clients) c.destroy();
    }
  });
});

describe('the preamble a front sends the back', () => {
  /** A connected unix socket pair: [the front's end, the back's end]. */
  async function pair(): Promise<[Socket, Socket, () => void]> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'preamble-'));
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(path.join(dir, 's.sock'), resolve));
    const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
    const front = connect(path.join(dir, 's.sock'));
    const back = await accepted;
    return [front, back, () => {
      front.destroy();
      back.destroy();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }];
  }
  const secret = randomBytes(SECRET_BYTES);
  const connection = { chain: [new Uint8Array([1, 2, 3])], remoteAddress: '10.0.0.7', remotePort: 4242, protocol: 'h2' };

  it('waits past its deadline for the connection of a socket that proved the secret in time (a front\'s spare), leaving what follows unread', async () => {
    const [front, back, done] = await pair();
    try {
      front.write(secret);
      const read = readPreamble(back, secret, 200);
      await new Promise((resolve) => setTimeout(resolve, 400));
      front.write(Buffer.concat([encodeConnection(connection), Buffer.from('PRI * HTTP/2.0')]));
      expect(await read).toEqual(connection);
      expect(String(back.read())).toBe('PRI * HTTP/2.0');
    } finally {
      done();
    }
  });

  it.each([
    ['another secret', (front: Socket) => front.write(randomBytes(SECRET_BYTES))],
    ['nothing in time', () => undefined],
  ])('closes a socket that sends %s', async (_what, send) => {
    const [front, back, done] = await pair();
    try {
      send(front);
      expect(await readPreamble(back, secret, 200)).toBeUndefined();
      expect(back.destroyed).toBe(true);
    } finally {
      done();
    }
  });
});

it('ends fronted connections on close(), a watch included', async () => {
  const s = await startTestServer({ serving: { tlsFrontWorkers: 1 } });
  const watch = await openWatch(s, '/api/v1/namespaces?watch=true');
  const h2watch = await openWatch(s, '/api/v1/namespaces?watch=true', {}, 'h2');
  await s.close();
  await Promise.all([watch.ended, h2watch.ended]);
});

it('reports a front thread that ends while the server runs, so the program stops', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tls-fronts-'));
  const credentials = await ensureCredentials(dataDir);
  const errors: string[] = [];
  const logger = createLogger({ level: 'error', name: 'fronts', destination: { write: (line: string) => errors.push(line) } });
  const tls = servingTls({ certPem: credentials.servingCertPem, keyPem: credentials.servingKeyPem, clientCaPem: credentials.caPem });
  const fronts = await startFronts({ workers: 2, context: tls.contextOptions(), alpnProtocols: ['http/1.1'], host: '127.0.0.1', port: 0, backlog: 16, handshakeTimeoutMs: 32_000, logger, serve: (socket) => socket.destroy() });
  try {
    // A context a front cannot load throws on its thread, which ends it.
    fronts.setSecureContext({ cert: 'not a certificate', key: 'not a key' });
    const err = await fronts.broken;
    expect(err.message).toMatch(/PEM|certificate|key/i);
    expect(errors.join('')).toContain('a TLS front thread ended');
  } finally {
    await fronts.close(0);
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/** The pid of a process that has ended. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

it('serves `kube-identity apiserver --tls-front-workers 2`; a restart removes the socket directory it left when killed, never a live one', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tls-fronts-'));
  const { child, target } = await startApiserverChild(dataDir, ['--tls-front-workers', '2', '--storage', 'memory']);
  let killedDir: string | undefined;
  try {
    const r = await raw(target, 'GET', '/api/v1/namespaces/default');
    expect(r.status).toBe(200);
    [killedDir] = frontDirs().filter((d) => path.basename(d).startsWith(`kube-identity-fronts-${child.pid}-`));
  } finally {
    await kill9(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
  // Killed outright, it could not remove its socket directory.
  expect(killedDir && existsSync(path.join(killedDir, 'back.sock'))).toBe(true);

  const gone = await deadPid();
  const made = (pid: number): string => mkdtempSync(path.join(os.tmpdir(), `kube-identity-fronts-${pid}-`));
  const anHourAgo = new Date(Date.now() - 3_600_000);
  // A process in another pid namespace sharing /tmp: its pid says nothing here, but it listens.
  const elsewhere = made(gone);
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(path.join(elsewhere, 'back.sock'), resolve));
  // A live process's (this one's), even with no socket for an hour; a starting one's, with no socket yet.
  const live = made(process.pid);
  utimesSync(live, anHourAgo, anHourAgo);
  const starting = made(gone);
  // A dead process's that never got as far as its socket, an hour ago.
  const abandoned = made(gone);
  utimesSync(abandoned, anHourAgo, anHourAgo);

  const restarted = await startTestServer({ serving: { tlsFrontWorkers: 1 } });
  try {
    expect(existsSync(killedDir!)).toBe(false);
    expect(existsSync(abandoned)).toBe(false);
    expect([elsewhere, live, starting].filter((d) => !existsSync(d))).toEqual([]);
    // The restarted server serves through its fronts, over a directory of its own.
    expect((await raw(restarted, 'GET', '/api/v1/namespaces/default')).status).toBe(200);
    expect(frontDirs().filter((d) => path.basename(d).startsWith(`kube-identity-fronts-${process.pid}-`) && d !== live)).toHaveLength(1);
  } finally {
    await restarted.close();
    await new Promise((resolve) => listener.close(resolve));
    for (const d of [elsewhere, live, starting]) rmSync(d, { recursive: true, force: true });
  }
}, 90_000);
