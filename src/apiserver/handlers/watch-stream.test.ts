import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { WatchStream } from './watch-stream.js';

/**
 * A real HTTP server whose one response is handed to the test, and a raw client socket. `finished`
 * resolves once the chunked body's terminator arrived: the kept-alive connection stays open after it.
 */
async function exchange(): Promise<{ res: ServerResponse; client: Socket; received: () => string; finished: Promise<void>; server: Server }> {
  let take: (res: ServerResponse) => void = () => undefined;
  const got = new Promise<ServerResponse>((resolve) => (take = resolve));
  const server = createServer((_req, res) => take(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  const chunks: Buffer[] = [];
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  client.on('data', (c: Buffer) => {
    chunks.push(c);
    if (Buffer.concat(chunks.slice(-2)).toString('latin1').endsWith('\r\n0\r\n\r\n')) done();
  });
  client.write('GET /watch HTTP/1.1\r\nHost: x\r\n\r\n');
  return { res: await got, client, received: () => Buffer.concat(chunks).toString(), finished, server };
}

/** The event lines of a chunked body (chunk sizes and the terminator left out). */
function lines(http: string): string[] {
  const body = http.slice(http.indexOf('\r\n\r\n') + 4);
  return body.split(/\r?\n/).filter((l) => l.startsWith('{'));
}

const opts = { kind: 'ConfigMap', apiVersion: 'v1' };
const ended = (client: Socket): Promise<void> => new Promise((resolve) => client.once('end', resolve));

describe('WatchStream', () => {
  it('writes one event per line, bookmarks, and ends the chunked response', async () => {
    const { res, client, received, server } = await exchange();
    const stream = new WatchStream(res, { ...opts, onOverflow: () => undefined });
    stream.start();
    stream.send('ADDED', { kind: 'ConfigMap', metadata: { name: 'a' } }, true);
    stream.bookmark(5, true);
    stream.send('MODIFIED', { kind: 'ConfigMap', metadata: { name: 'a' } });
    stream.end();
    stream.send('DELETED', { kind: 'ConfigMap', metadata: { name: 'a' } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    client.end();
    await ended(client);
    server.close();
    const text = received();
    expect(text).toMatch(/^HTTP\/1.1 200 OK\r\n/);
    expect(text).toMatch(/\r\n0\r\n\r\n$/);
    expect(lines(text).map((l) => JSON.parse(l) as unknown)).toEqual([
      { type: 'ADDED', object: { kind: 'ConfigMap', metadata: { name: 'a' } } },
      {
        type: 'BOOKMARK',
        object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '5', creationTimestamp: null, annotations: { 'k8s.io/initial-events-end': 'true' } } },
      },
      { type: 'MODIFIED', object: { kind: 'ConfigMap', metadata: { name: 'a' } } },
    ]);
  });

  it('closes a watcher whose client stops reading once it falls a budget behind, holding no more than that', async () => {
    const { res, client, received, finished, server } = await exchange();
    client.pause();
    let overflows = 0;
    const bufferBytes = 64 * 1024;
    const stream = new WatchStream(res, { ...opts, bufferBytes, onOverflow: () => (overflows++, stream.end()) });
    stream.start();
    const data = 'x'.repeat(4096);
    let sent = 0;
    // Far more than the socket buffers and the budget hold: 64 MiB.
    for (let i = 0; i < 16_384 && overflows === 0; i++) {
      stream.send('ADDED', { kind: 'ConfigMap', metadata: { name: `c${i}` }, data: { data } });
      sent++;
      if (i % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(overflows).toBe(1);
    // What the server still holds for this client is bounded by the budget (plus one socket buffer).
    expect(res.writableLength).toBeLessThan(bufferBytes + res.writableHighWaterMark + 8192);
    client.resume();
    await finished;
    client.destroy();
    server.close();
    const got = lines(received()).map((l) => (JSON.parse(l) as { object: { metadata: { name: string } } }).object.metadata.name);
    // The client gets a prefix of the events, in order, then the end of the stream.
    expect(got.length).toBeLessThan(sent);
    expect(got).toEqual(got.map((_, i) => `c${i}`));
    expect(received()).toMatch(/\r\n0\r\n\r\n$/);
  });

  it('delivers events queued while the socket was full, in order, to a client that catches up', async () => {
    const { res, client, received, finished, server } = await exchange();
    client.pause();
    const stream = new WatchStream(res, { ...opts, bufferBytes: 1 << 30, onOverflow: () => undefined });
    stream.start();
    const data = 'y'.repeat(8192);
    for (let i = 0; i < 1000; i++) stream.send('ADDED', { kind: 'ConfigMap', metadata: { name: `c${i}` }, data: { data } });
    client.resume();
    while (lines(received()).length < 1000) await new Promise((resolve) => setTimeout(resolve, 10));
    stream.end();
    await finished;
    client.destroy();
    server.close();
    const got = lines(received()).map((l) => (JSON.parse(l) as { object: { metadata: { name: string } } }).object.metadata.name);
    expect(got).toEqual(Array.from({ length: 1000 }, (_, i) => `c${i}`));
  });
});
