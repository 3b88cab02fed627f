/**
 * Watch back-pressure with 100 stalled watchers: clients that open a watch and never read are
 * closed once they fall the server's budget behind (as kube-apiserver's cacher closes slow
 * watchers), so the server holds a bounded amount for them however much is written; each client
 * then gets a prefix of the events and a clean end, and a fresh watch resumes from what it read.
 */
import { connect, type TLSSocket } from 'node:tls';
import { openWatch, presenting, raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const WATCHERS = 100;
const WRITES = 400;
const VALUE = 'v'.repeat(32 * 1024);

interface Stalled {
  socket: TLSSocket;
  chunks: Buffer[];
  /** Resolves once the response's last chunk arrived. */
  ended: Promise<void>;
}

/** A watch request on a raw TLS connection whose reads are paused from the start. */
function stalledWatch(server: TestServer, path: string): Promise<Stalled> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const admin = presenting(server.admin);
    const socket = connect({ host: url.hostname, port: Number(url.port), ca: server.caPem, ...admin.tls }, () => {
      const headers = Object.entries(admin.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\n${headers}\r\n`);
      socket.pause();
      resolve({ socket, chunks, ended });
    });
    const chunks: Buffer[] = [];
    // The response ends with the chunked terminator; the kept-alive connection stays open after it.
    let done: () => void = () => undefined;
    const ended = new Promise<void>((resolve) => (done = resolve));
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (Buffer.concat(chunks.slice(-2)).toString('latin1').endsWith('\r\n0\r\n\r\n')) done();
    });
    socket.once('error', reject);
  });
}

/** The resourceVersions of the ADDED events in a chunked watch body. */
function addedVersions(body: string): number[] {
  return body
    .split(/\r?\n/)
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { type: string; object: { metadata: { resourceVersion: string } } })
    .filter((e) => e.type === 'ADDED')
    .map((e) => Number(e.object.metadata.resourceVersion));
}

async function metric(server: TestServer, line: RegExp): Promise<number | undefined> {
  const m = line.exec((await raw(server, 'GET', '/metrics')).text);
  return m ? Number(m[1]) : undefined;
}

describe('watch back-pressure', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('closes 100 watchers that stop reading, holds a bounded amount for them, and lets them resume', async () => {
    const ns = '/api/v1/namespaces/default/configmaps';
    const start = Number((await raw(server, 'GET', ns)).json.metadata.resourceVersion);
    const stalled = await Promise.all(Array.from({ length: WATCHERS }, () => stalledWatch(server, `${ns}?watch=1&resourceVersion=${start}`)));

    let last = 0;
    for (let i = 0; i < WRITES; i += 10) {
      const batch = Array.from({ length: 10 }, (_, j) =>
        raw(server, 'POST', ns, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i + j}` }, data: { v: VALUE } } }),
      );
      for (const res of await Promise.all(batch)) {
        expect(res.status).toBe(201);
        last = Math.max(last, Number(res.json.metadata.resourceVersion));
      }
    }
    const written = WRITES * VALUE.length;

    // Every stalled watcher was closed for falling behind; none is registered any more.
    expect(await metric(server, /^apiserver_terminated_watchers_total\{group="",version="v1",resource="configmaps"\} (\d+)$/m)).toBe(WATCHERS);
    expect(await metric(server, /^apiserver_registered_watchers\{group="",version="v1",kind="ConfigMap"\} (\d+)$/m)).toBe(0);

    // Reading now, each client gets what the server had buffered for it: a prefix far smaller than
    // what was written (the budget plus the sockets' buffers), in order, then the end of the stream.
    for (const s of stalled) s.socket.resume();
    await Promise.all(stalled.map((s) => s.ended));
    const resumeFrom: number[] = [];
    for (const s of stalled) {
      const body = Buffer.concat(s.chunks).toString();
      expect(body).toMatch(/^HTTP\/1.1 200 OK\r\n/);
      expect(body).toMatch(/\r\n0\r\n\r\n$/);
      expect(body.length).toBeLessThan(written / 2);
      const versions = addedVersions(body);
      expect(versions.length).toBeLessThan(WRITES);
      expect(versions).toEqual([...versions].sort((a, b) => a - b));
      resumeFrom.push(versions.at(-1) ?? start);
      s.socket.destroy();
    }

    // A fresh watch from the last revision a closed client read delivers everything after it.
    const from = Math.min(...resumeFrom);
    const resumed = await openWatch(server, `${ns}?watch=1&resourceVersion=${from}`);
    const events = await resumed.waitFor(last - from, 30_000);
    resumed.close();
    expect(events.map((e: { object: { metadata: { resourceVersion: string } } }) => Number(e.object.metadata.resourceVersion))).toEqual(
      Array.from({ length: last - from }, (_, i) => from + i + 1),
    );
  }, 60_000);
});
