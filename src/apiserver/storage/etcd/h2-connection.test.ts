/**
 * The etcd client's own HTTP/2 connection against Node's HTTP/2 server (nghttp2, an independent
 * implementation: Huffman-coded headers, its dynamic table, its flow control windows, its PINGs and
 * GOAWAYs) and against a raw socket that misbehaves on purpose.
 */
import http2 from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import { H2Connection } from './h2-connection.js';
import { FrameType, H2Error, frame, settingsFrame } from './h2-frames.js';
import type { StreamEnd } from './h2-stream.js';
import type { HeaderField } from './hpack.js';

interface Reply {
  headers: HeaderField[][];
  body: Buffer;
  end: StreamEnd;
}

/** Sends one request on `conn` and collects what comes back until the stream ends. */
function request(conn: H2Connection, path: string, body?: Buffer, extra: HeaderField[] = []): Promise<Reply> {
  return new Promise((resolve) => {
    const headers: HeaderField[][] = [];
    const chunks: Buffer[] = [];
    const stream = conn.request([[':method', 'POST'], [':scheme', 'http'], [':path', path], [':authority', 'test'], ...extra], {
      onHeaders: (fields) => headers.push(fields),
      onData: (data) => chunks.push(data),
      onClose: (end) => resolve({ headers, body: Buffer.concat(chunks), end }),
    });
    stream.write(body ?? Buffer.alloc(0), true);
  });
}

const field = (fields: HeaderField[] | undefined, name: string): string | undefined => fields?.find(([n]) => n === name)?.[1];

describe('the etcd client HTTP/2 connection', () => {
  let server: http2.Http2Server;
  let url: URL;
  const sessions = new Set<http2.ServerHttp2Session>();
  let onStream: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void;

  beforeAll(async () => {
    server = http2.createServer();
    server.on('session', (s) => {
      sessions.add(s);
      s.on('close', () => sessions.delete(s));
    });
    server.on('stream', (stream, headers) => {
      stream.on('error', () => {});
      onStream(stream, headers);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });

  afterAll(async () => {
    for (const s of sessions) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('exchanges bodies far past the 64 KiB windows both ways, with headers and trailers Huffman-coded and indexed', async () => {
    onStream = (stream, headers) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const got = Buffer.concat(chunks);
        stream.respond({ ':status': 200, 'x-echo-length': String(got.length), 'x-path': String(headers[':path']) }, { waitForTrailers: true });
        stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': 'all%20good' }));
        // The reply: the request three times over, several MiB past our 1 MiB stream window.
        stream.end(Buffer.concat([got, got, got]));
      });
    };
    const conn = new H2Connection(url);
    const body = Buffer.alloc(1_500_000);
    for (let i = 0; i < body.length; i++) body[i] = (i * 7) & 0xff;
    const replies = await Promise.all([1, 2, 3].map((n) => request(conn, `/big/${n}`, body)));
    for (const [i, r] of replies.entries()) {
      expect(r.end).toEqual({ unsent: false });
      expect(field(r.headers[0], ':status')).toBe('200');
      expect(field(r.headers[0], 'x-echo-length')).toBe(String(body.length));
      expect(field(r.headers[0], 'x-path')).toBe(`/big/${i + 1}`);
      expect(r.headers[1]).toEqual([['grpc-status', '0'], ['grpc-message', 'all%20good']]);
      expect(r.body.equals(Buffer.concat([body, body, body]))).toBe(true);
    }
    // Fifty more on the same connection: the server's table now indexes what repeats.
    const small = await Promise.all(Array.from({ length: 50 }, (_, i) => request(conn, `/small/${i}`, Buffer.from('x'))));
    expect(small.map((r) => field(r.headers[0], 'x-path'))).toEqual(small.map((_, i) => `/small/${i}`));
    conn.close();
  });

  it('answers the server PINGs, waits for its MAX_CONCURRENT_STREAMS, and ends streams reset by it', async () => {
    let running = 0;
    let most = 0;
    onStream = (stream, headers) => {
      running++;
      most = Math.max(most, running);
      stream.on('close', () => running--);
      stream.resume();
      stream.on('end', () => {
        if (headers[':path'] === '/reset') return stream.close(H2Error.CANCEL);
        // A trailers-only answer: one HEADERS frame with END_STREAM.
        setTimeout(() => stream.respond({ ':status': 200, 'grpc-status': '5', 'grpc-message': 'not found' }, { endStream: true }), 5);
      });
    };
    server.once('session', (s) => s.settings({ maxConcurrentStreams: 2 }));
    const conn = new H2Connection(url);
    // The server's SETTINGS arrive with its answer to the first request; until then no limit is known.
    await request(conn, '/limited');
    const replies = await Promise.all(Array.from({ length: 8 }, () => request(conn, '/limited')));
    expect(replies.map((r) => field(r.headers[0], 'grpc-status'))).toEqual(Array(8).fill('5'));
    expect(most).toBeLessThanOrEqual(2);
    const session = [...sessions].at(-1)!;
    const rtt = await new Promise<number>((resolve, reject) => session.ping((err, ms) => (err ? reject(err) : resolve(ms))));
    expect(rtt).toBeGreaterThanOrEqual(0);
    const reset = await request(conn, '/reset');
    expect(reset.end).toEqual({ rstCode: H2Error.CANCEL, unsent: false });
    await new Promise<void>((resolve) => conn.ping(resolve));
    conn.close();
  });

  it("ends the streams past a GOAWAY's last stream as never processed, and finishes the ones before it", async () => {
    const held: http2.ServerHttp2Stream[] = [];
    onStream = (stream) => {
      stream.resume();
      held.push(stream);
      if (held.length === 3) {
        stream.session!.goaway(H2Error.NO_ERROR, held[0]!.id!);
        setTimeout(() => held[0]!.respond({ ':status': 200, 'grpc-status': '0' }, { endStream: true }), 10);
      }
    };
    const conn = new H2Connection(url);
    let closing = 0;
    conn.onClosing = () => closing++;
    const replies = await Promise.all([1, 2, 3].map(() => request(conn, '/goaway')));
    expect(replies[0]!.end).toEqual({ unsent: false });
    expect(field(replies[0]!.headers[0], 'grpc-status')).toBe('0');
    for (const r of replies.slice(1)) expect(r.end).toMatchObject({ rstCode: H2Error.REFUSED_STREAM, unsent: true });
    expect(closing).toBe(1);
    expect(() => conn.request([[':method', 'POST']], { onHeaders: () => {}, onData: () => {}, onClose: () => {} })).toThrow(/closing/);
  });

  it('ends every stream with an error, never an exception, when the connection fails, is refused or the peer breaks the protocol', async () => {
    // Nothing listening: never sent.
    const closedPort = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    const refused = await request(new H2Connection(new URL(`http://127.0.0.1:${closedPort}`)), '/x');
    expect(refused.end).toMatchObject({ unsent: true, error: expect.objectContaining({ code: 'ECONNREFUSED' }) });

    // A peer that answers with a frame longer than the 16 KiB we allow, one that drops the connection
    // mid-reply, and one whose header block is not valid HPACK.
    const faults: ((socket: net.Socket) => void)[] = [
      (socket) => socket.write(Buffer.concat([settingsFrame([]), frame(FrameType.DATA, 0, 1, Buffer.alloc(20_000))])),
      (socket) => socket.end(Buffer.concat([settingsFrame([]), frame(FrameType.HEADERS, 0x4, 1, Buffer.from([0x88])), frame(FrameType.DATA, 0, 1, Buffer.from('partial'))])),
      (socket) => socket.write(Buffer.concat([settingsFrame([]), frame(FrameType.HEADERS, 0x4, 1, Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]))])),
    ];
    for (const fault of faults) {
      const peer = net.createServer((socket) => {
        socket.on('error', () => {});
        socket.once('data', () => fault(socket));
      });
      await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
      const conn = new H2Connection(new URL(`http://127.0.0.1:${(peer.address() as AddressInfo).port}`));
      const reply = await request(conn, '/x', Buffer.from('hello'));
      expect(reply.end).toMatchObject({ unsent: false, error: expect.any(Error) });
      expect(conn.destroyed).toBe(true);
      await new Promise((resolve) => peer.close(resolve));
    }
  });
});
