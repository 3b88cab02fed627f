/**
 * The socket under an HTTP/2 client connection (h2-connection.ts): plain TCP for http:// members,
 * TLS with ALPN h2 (and the member's CA, client certificate and key) for https:// ones. Frames
 * written during one turn of the event loop leave in one write, after its I/O callbacks (setImmediate,
 * as nghttp2's writes in node:http2): an API server handling many requests per turn starts their etcd
 * calls from separate callbacks, and a write per callback (process.nextTick) cost twice the syscalls.
 */
import net from 'node:net';
import tls from 'node:tls';

export interface ConnectionTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

export interface SocketEvents {
  data(chunk: Buffer): void;
  /** Once: the socket failed or closed. */
  ended(err: Error): void;
}

export class FrameSocket {
  /** Connected (for TLS, the handshake done): nothing written before that reached the peer. */
  connected = false;
  private readonly socket: net.Socket;
  private outbox: Buffer[] = [];
  private scheduled = false;
  private done = false;

  constructor(url: URL, tlsOptions: ConnectionTls | undefined, events: SocketEvents) {
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (url.protocol === 'https:') {
      const servername = net.isIP(host) ? undefined : host;
      this.socket = tls.connect({ host, port, servername, ALPNProtocols: ['h2'], ca: tlsOptions?.ca, cert: tlsOptions?.cert, key: tlsOptions?.key });
      this.socket.once('secureConnect', () => (this.connected = true));
    } else {
      this.socket = net.connect({ host, port });
      this.socket.once('connect', () => (this.connected = true));
    }
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => events.data(chunk));
    const ended = (err: Error): void => {
      if (this.done) return;
      this.done = true;
      events.ended(err);
    };
    this.socket.on('error', ended);
    this.socket.on('close', () => ended(new Error('connection closed')));
  }

  /** Lets the process exit while the socket is open. */
  unref(): void {
    this.socket.unref();
  }

  /** Queues bytes for this turn's write; Node holds them until the socket connects. */
  send(bytes: Buffer): void {
    if (this.done) return;
    this.outbox.push(bytes);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.scheduled = false;
    if (this.outbox.length === 0 || this.done) return;
    const out = this.outbox.length === 1 ? this.outbox[0]! : Buffer.concat(this.outbox);
    this.outbox = [];
    this.socket.write(out);
  }

  /** Sends what is queued, then closes our side. */
  end(): void {
    this.flush();
    this.socket.end();
  }

  destroy(): void {
    this.done = true;
    this.outbox = [];
    this.socket.destroy();
  }
}
