/**
 * A client HTTP/2 connection (RFC 9113) on a plain or TLS socket, as much of the protocol as a gRPC
 * client needs from etcd's Go server: the preface and SETTINGS (acknowledged both ways), streams
 * opened in order and held back past the peer's MAX_CONCURRENT_STREAMS, flow control both ways
 * (DATA waits for the peer's windows; our windows are replenished as data arrives), PING answered
 * and sent, GOAWAY (streams past its last id end as never processed), RST_STREAM, padding,
 * CONTINUATION. A protocol violation by the peer ends the connection with GOAWAY, and every stream on
 * it then ends with an error: nothing here throws at a caller except `request` on a closed connection.
 */
import { DEFAULT_MAX_FRAME, DEFAULT_WINDOW, Flag, type Frame, FrameReader, FrameType, frame, frameHeader, goawayFrame, headerFrames } from './h2-frames.js';
import { H2Error, MAX_WINDOW, PREFACE, rstStreamFrame, Setting, settingsFrame, unpadded, windowUpdateFrame } from './h2-frames.js';
import { type ConnectionTls, FrameSocket } from './h2-socket.js';
import { type HeaderBlock, HeaderBlockReader } from './h2-header-block.js';
import { H2Stream, type StreamHandler } from './h2-stream.js';
import { type HeaderField, HpackEncoder } from './hpack.js';

/** Our receive windows: large, since every byte is consumed as it arrives. */
const STREAM_WINDOW = 1 << 20;
const CONNECTION_WINDOW = 8 << 20;

export class H2Connection {
  /** No new streams: GOAWAY received or sent, or the connection failed. */
  closing = false;
  destroyed = false;
  /** Called once when the connection stops taking new streams (GOAWAY, failure, close). */
  onClosing: (() => void) | undefined;
  readonly streams = new Map<number, H2Stream>();
  private readonly waiting: H2Stream[] = [];
  private readonly socket: FrameSocket;
  private readonly reader = new FrameReader(DEFAULT_MAX_FRAME);
  private readonly encoder = new HpackEncoder();
  private readonly headers = new HeaderBlockReader();
  private nextId = 1;
  private peerStreamWindow = DEFAULT_WINDOW;
  private peerMaxFrame = DEFAULT_MAX_FRAME;
  private peerMaxStreams = Infinity;
  private sendWindow = DEFAULT_WINDOW;
  private received = 0;
  private readonly pings = new Map<string, () => void>();
  private pingSeq = 0;
  private failure: Error | undefined;

  constructor(url: URL, tlsOptions?: ConnectionTls) {
    this.socket = new FrameSocket(url, tlsOptions, { data: (chunk) => this.receive(chunk), ended: (err) => this.destroy(this.failure ?? err) });
    // The preface and our settings go first, then whatever streams open.
    this.send(PREFACE);
    this.send(settingsFrame([[Setting.ENABLE_PUSH, 0], [Setting.INITIAL_WINDOW_SIZE, STREAM_WINDOW]]));
    this.send(windowUpdateFrame(0, CONNECTION_WINDOW - DEFAULT_WINDOW));
  }

  /** The socket is connected (for TLS, the handshake done): a stream sent before that was never sent. */
  get connected(): boolean {
    return this.socket.connected;
  }

  /** Lets the process exit while the connection is open (calls in flight keep it alive by their timers). */
  unref(): void {
    this.socket.unref();
  }

  /**
   * Opens a stream with the request's header fields, `fields` then `extra` (HpackEncoder.encode: a
   * method's constant fields as one array, reused); throws when the connection takes no new streams.
   */
  request(fields: readonly HeaderField[], handler: StreamHandler, extra?: readonly HeaderField[]): H2Stream {
    if (this.closing) throw new Error(this.failure ? `connection failed: ${this.failure.message}` : 'connection is closing');
    const stream = new H2Stream(this, fields, handler, extra);
    if (this.streams.size >= this.peerMaxStreams) this.waiting.push(stream);
    else this.start(stream);
    return stream;
  }

  /** Sends a PING; `answered` runs when its ACK arrives. */
  ping(answered: () => void): void {
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(++this.pingSeq, 4);
    this.pings.set(payload.toString('hex'), answered);
    this.send(frame(FrameType.PING, 0, 0, payload));
  }

  /** No new streams; the socket ends once the running ones are done. */
  close(): void {
    if (this.destroyed) return;
    if (!this.closing) this.send(goawayFrame(0, H2Error.NO_ERROR));
    this.markClosing();
    if (this.streams.size === 0 && this.waiting.length === 0) this.socket.end();
  }

  /** Ends the connection now: every stream on it ends with `err`. */
  destroy(err: Error): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.failure ??= err;
    this.markClosing();
    this.socket.destroy();
    for (const s of [...this.waiting, ...this.streams.values()]) s.closed({ error: err, unsent: !this.connected || s.id === 0 });
    this.waiting.length = 0;
    this.streams.clear();
    this.pings.clear();
  }

  // --- for H2Stream ---

  /** Sends what the stream has queued as far as both send windows allow. */
  pump(stream: H2Stream): void {
    if (this.streams.get(stream.id) !== stream || this.destroyed) return;
    const maxChunk = Math.min(this.peerMaxFrame, Math.max(0, Math.min(this.sendWindow, stream.sendWindow)));
    stream.flush(maxChunk, (data, end) => {
      this.sendWindow -= data.length;
      stream.sendWindow -= data.length;
      this.sendData(stream.id, data, end);
      return Math.min(this.peerMaxFrame, Math.max(0, Math.min(this.sendWindow, stream.sendWindow)));
    });
  }

  /** Resets a stream we no longer want. */
  reset(stream: H2Stream, code: number): void {
    if (stream.id !== 0 && this.streams.has(stream.id)) this.send(rstStreamFrame(stream.id, code));
    this.remove(stream);
  }

  /** Acknowledges `length` octets of DATA the stream consumed, and the connection's share. */
  consumed(stream: H2Stream | undefined, length: number): void {
    this.received += length;
    if (this.received >= CONNECTION_WINDOW / 2) {
      this.send(windowUpdateFrame(0, this.received));
      this.received = 0;
    }
    if (stream && !stream.remoteEnded && (stream.received += length) >= STREAM_WINDOW / 2) {
      this.send(windowUpdateFrame(stream.id, stream.received));
      stream.received = 0;
    }
  }

  /** The stream is done both ways (or reset): it leaves the connection. */
  remove(stream: H2Stream): void {
    if (stream.id === 0) {
      const at = this.waiting.indexOf(stream);
      if (at >= 0) this.waiting.splice(at, 1);
    } else this.streams.delete(stream.id);
    while (this.waiting.length > 0 && this.streams.size < this.peerMaxStreams && !this.closing) this.start(this.waiting.shift()!);
    if (this.closing && this.streams.size === 0 && this.waiting.length === 0) this.socket.end();
  }

  private finished(stream: H2Stream): void {
    this.remove(stream);
    stream.closed({ unsent: false });
  }

  private start(stream: H2Stream): void {
    if (this.nextId > MAX_WINDOW) {
      // Out of stream ids: this connection takes nothing more, the next call opens another.
      this.markClosing();
      stream.closed({ error: new Error('out of stream ids'), unsent: true });
      return;
    }
    stream.id = this.nextId;
    this.nextId += 2;
    stream.sendWindow = this.peerStreamWindow;
    this.streams.set(stream.id, stream);
    const endStream = stream.endQueued && stream.queued() === 0;
    for (const f of headerFrames(stream.id, this.encoder.encode(stream.fields, stream.extra), this.peerMaxFrame, endStream)) this.send(f);
    if (endStream) stream.localEnded = true;
    else this.pump(stream);
  }

  private markClosing(): void {
    if (this.closing) return;
    this.closing = true;
    this.onClosing?.();
  }

  private sendData(id: number, data: Buffer, end: boolean): void {
    this.send(frameHeader(FrameType.DATA, end ? Flag.END_STREAM : 0, id, data.length));
    if (data.length > 0) this.send(data);
  }

  send(bytes: Buffer): void {
    if (!this.destroyed) this.socket.send(bytes);
  }

  private receive(chunk: Buffer): void {
    try {
      for (const f of this.reader.push(chunk)) {
        if (this.destroyed) return;
        this.handle(f);
      }
    } catch (err) {
      this.fail(/HPACK/.test((err as Error).message) ? H2Error.COMPRESSION_ERROR : H2Error.PROTOCOL_ERROR, err as Error);
    }
  }

  /** A connection error (§5.4.1): GOAWAY with the code, then the end of the connection. */
  private fail(code: number, err: Error): void {
    if (this.destroyed) return;
    // Last stream 0: a client that disabled push processes no streams of the server's.
    this.send(goawayFrame(0, code));
    this.socket.flush();
    this.destroy(err);
  }

  private handle(f: Frame): void {
    if (this.headers.continuing && f.type !== FrameType.CONTINUATION) throw new Error('HTTP/2: expected CONTINUATION');
    switch (f.type) {
      case FrameType.DATA:
        return this.onData(f);
      case FrameType.HEADERS:
      case FrameType.CONTINUATION:
        return this.onHeaders(this.headers.read(f));
      case FrameType.RST_STREAM:
        return this.onReset(f);
      case FrameType.SETTINGS:
        return this.onSettings(f);
      case FrameType.PING:
        return this.onPing(f);
      case FrameType.GOAWAY:
        return this.onGoaway(f);
      case FrameType.WINDOW_UPDATE:
        return this.onWindowUpdate(f);
      case FrameType.PUSH_PROMISE:
        throw new Error('HTTP/2: PUSH_PROMISE with push disabled');
      default:
        // PRIORITY and frame types this client does not know are ignored (§4.1, §5.5).
        return;
    }
  }

  private onData(f: Frame): void {
    if (f.stream === 0) throw new Error('HTTP/2: DATA on stream 0');
    const stream = this.streams.get(f.stream);
    this.consumed(stream, f.payload.length);
    if (!stream) return;
    const data = unpadded(f);
    if (f.flags & Flag.END_STREAM) stream.remoteEnded = true;
    if (data.length > 0) stream.handler.onData(data);
    if (stream.remoteEnded) this.remoteDone(stream);
  }

  /** A complete header block (none while one is still arriving) goes to its stream, if it still has one. */
  private onHeaders(block: HeaderBlock | undefined): void {
    const stream = block && this.streams.get(block.stream);
    if (!block || !stream) return;
    if (block.endStream) stream.remoteEnded = true;
    stream.handler.onHeaders(block.fields, block.endStream);
    if (stream.remoteEnded) this.remoteDone(stream);
  }

  /** The peer ended its side: the call is over. A request still being sent is cut off (§8.1). */
  private remoteDone(stream: H2Stream): void {
    if (!this.streams.has(stream.id)) return;
    if (!stream.localEnded) {
      this.send(rstStreamFrame(stream.id, H2Error.NO_ERROR));
      stream.localEnded = true;
    }
    this.finished(stream);
  }

  private onReset(f: Frame): void {
    if (f.payload.length !== 4) throw new Error('HTTP/2: RST_STREAM of the wrong size');
    const stream = this.streams.get(f.stream);
    if (!stream) return;
    const code = f.payload.readUInt32BE(0);
    this.remove(stream);
    stream.closed({ rstCode: code, unsent: code === H2Error.REFUSED_STREAM });
  }

  private onPing(f: Frame): void {
    if (f.payload.length !== 8 || f.stream !== 0) throw new Error('HTTP/2: malformed PING');
    if (!(f.flags & Flag.ACK)) return this.send(frame(FrameType.PING, Flag.ACK, 0, f.payload));
    const key = f.payload.toString('hex');
    const answered = this.pings.get(key);
    this.pings.delete(key);
    answered?.();
  }

  private onSettings(f: Frame): void {
    if (f.stream !== 0 || (f.flags & Flag.ACK ? f.payload.length !== 0 : f.payload.length % 6 !== 0)) throw new Error('HTTP/2: malformed SETTINGS');
    if (f.flags & Flag.ACK) return;
    for (let at = 0; at < f.payload.length; at += 6) {
      const id = f.payload.readUInt16BE(at);
      const value = f.payload.readUInt32BE(at + 2);
      if (id === Setting.INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW) return this.fail(H2Error.FLOW_CONTROL_ERROR, new Error('HTTP/2: initial window too large'));
        // A new initial window changes every open stream's window by the difference (§6.9.2).
        for (const s of this.streams.values()) s.sendWindow += value - this.peerStreamWindow;
        this.peerStreamWindow = value;
      } else if (id === Setting.MAX_FRAME_SIZE) {
        if (value < DEFAULT_MAX_FRAME || value > 0xffffff) throw new Error('HTTP/2: invalid MAX_FRAME_SIZE');
        this.peerMaxFrame = value;
      } else if (id === Setting.MAX_CONCURRENT_STREAMS) this.peerMaxStreams = value;
      else if (id === Setting.HEADER_TABLE_SIZE) this.encoder.setMaxSize(value);
    }
    this.send(frame(FrameType.SETTINGS, Flag.ACK, 0));
    for (const s of this.streams.values()) this.pump(s);
  }

  private onGoaway(f: Frame): void {
    if (f.stream !== 0 || f.payload.length < 8) throw new Error('HTTP/2: malformed GOAWAY');
    const last = f.payload.readUInt32BE(0) & 0x7fffffff;
    const code = f.payload.readUInt32BE(4);
    this.markClosing();
    // Streams past `last` were never processed (§6.8): they end as refused, safe to send again.
    const refused = [...this.waiting, ...[...this.streams.values()].filter((s) => s.id > last)];
    this.waiting.length = 0;
    for (const s of refused) {
      this.streams.delete(s.id);
      s.closed({ rstCode: H2Error.REFUSED_STREAM, unsent: true, error: new Error(`GOAWAY (code ${code})`) });
    }
    if (this.streams.size === 0) this.socket.end();
  }

  private onWindowUpdate(f: Frame): void {
    if (f.payload.length !== 4) throw new Error('HTTP/2: WINDOW_UPDATE of the wrong size');
    const increment = f.payload.readUInt32BE(0) & 0x7fffffff;
    if (f.stream === 0) {
      if (increment === 0) throw new Error('HTTP/2: WINDOW_UPDATE of 0');
      if ((this.sendWindow += increment) > MAX_WINDOW) return this.fail(H2Error.FLOW_CONTROL_ERROR, new Error('HTTP/2: connection window overflow'));
      for (const s of this.streams.values()) this.pump(s);
      return;
    }
    const stream = this.streams.get(f.stream);
    if (!stream) return;
    if (increment === 0 || (stream.sendWindow += increment) > MAX_WINDOW) {
      this.reset(stream, increment === 0 ? H2Error.PROTOCOL_ERROR : H2Error.FLOW_CONTROL_ERROR);
      return stream.closed({ error: new Error('HTTP/2: invalid stream WINDOW_UPDATE'), unsent: false });
    }
    this.pump(stream);
  }
}
