/**
 * TLS fronts (--tls-front-workers): worker threads that accept and handshake the secure port's
 * connections, so the store-owning event loop (the back) no longer spends a new connection's 1.7 ms
 * of TLS on its own thread, nor leaves connections waiting in the kernel's accept queue while it
 * serves requests (docs/performance-history.md, "Connection handling: one event loop or several").
 *
 * The plaintext comes back over a unix socket, not a MessagePort: the back's node:http and node:http2
 * then read a native stream handle (as from TCP), and the kernel applies backpressure both ways. It
 * must not be reachable by anyone else, since its preamble carries a client's certificate chain: the
 * socket is in a directory of its own (fronts-dir.ts: mode 0700, this process's owner), never an
 * abstract socket (those have no permissions), and each connection first proves a 32-byte secret
 * that only this process and its threads hold. A connection that does not is closed unread.
 *
 * The back accepts on BACK_SOCKETS sockets, and each front spreads its connections over them (and
 * keeps a spare one open to each): libuv accepts one connection per listening socket per loop turn, so
 * with one socket the back took one handed-over connection per turn of its busy loop while the
 * front handshook hundreds per second. Those connections, their handshakes done, waited in the
 * kernel's queue of the unix socket with their clients' requests already sent (the requests' wait),
 * and once that queue was full the front's connect failed and it closed them, which the client saw
 * as its streams cancelled (RST_STREAM CANCEL; docs/performance-history.md, session 13).
 *
 * A front that ends while the server runs leaves it half-serving: `broken` settles with why, and the
 * program stops (src/cmd), so a supervisor restarts the whole server.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer as createUnixServer, type Socket } from 'node:net';
import path from 'node:path';
import type { SecureContextOptions } from 'node:tls';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../log/logger.js';
import { workerModule } from '../../lib/worker-module.js';
import { setFrontedPeer } from '../http/connection.js';
import { backSocket, makeFrontsDir } from './fronts-dir.js';
import { readPreamble, SECRET_BYTES, type FrontedConnection } from './front-preamble.js';
import type { FromFrontMessage, FrontWorkerData, ToFrontMessage } from './front-worker.js';

export interface FrontsOptions {
  workers: number;
  context: SecureContextOptions;
  alpnProtocols: string[];
  host: string;
  /** 0: the first front picks a free port, the others join it. */
  port: number;
  backlog: number;
  /** How long an accepted connection may wait for its handshake to start (secure-accept.ts). */
  handshakeWaitMs?: number;
  /** How long a started TLS handshake may take (connection-serving.ts). */
  handshakeTimeoutMs: number;
  logger: Logger;
  /** Serves a connection a front handed over (its peer is set on the socket). */
  serve(socket: Socket, connection: FrontedConnection): void;
}

export interface Fronts {
  port: number;
  /** Settles (never rejects) with the reason once a front has ended unasked. */
  broken: Promise<Error>;
  /** Gives every front a new serving pair. */
  setSecureContext(context: SecureContextOptions): void;
  /** Stops accepting; the fronts end once the back has ended their connections (at most `graceMs`). */
  close(graceMs: number): Promise<void>;
}

/**
 * Fewer than the port's ACCEPTORS (secure-accept.ts): the back's sockets carry finished handshakes
 * from a few fronts, not a storm's connects, and each front holds a spare connection to every one.
 */
export const BACK_SOCKETS = 16;

/** A front connects and writes its preamble at once: a connection silent this long is not one. */
const PREAMBLE_TIMEOUT_MS = 10_000;

export async function startFronts(o: FrontsOptions): Promise<Fronts> {
  const dir = await makeFrontsDir(o.logger);
  const backPaths = Array.from({ length: BACK_SOCKETS }, (_, i) => path.join(dir, backSocket(i)));
  const secret = randomBytes(SECRET_BYTES);
  const handOver = (socket: Socket): void => {
    void readPreamble(socket, secret, PREAMBLE_TIMEOUT_MS).then((connection) => {
      if (!connection) {
        o.logger.warn('refused a connection to the TLS fronts\' socket that did not prove their secret');
        return;
      }
      setFrontedPeer(socket, connection);
      o.serve(socket, connection);
    });
  };
  const backs = backPaths.map(() => createUnixServer({ allowHalfOpen: true }, handOver));
  try {
    await Promise.all(backs.map((b, i) => new Promise<void>((resolve, reject) => b.once('error', reject).listen({ path: backPaths[i], backlog: o.backlog }, () => resolve()))));
  } catch (err) {
    for (const b of backs) if (b.listening) b.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  const common: Omit<FrontWorkerData, 'port' | 'exclusive'> = {
    context: o.context,
    alpnProtocols: o.alpnProtocols,
    ticketKeys: randomBytes(48),
    host: o.host,
    backlog: o.backlog,
    handshakeWaitMs: o.handshakeWaitMs,
    handshakeTimeoutMs: o.handshakeTimeoutMs,
    backPaths,
    secret,
  };
  const workers: Worker[] = [];
  /** Each worker's exit, settled once it has ended (asked or not). */
  const exits: Promise<void>[] = [];
  let closing = false;
  let reportBroken: (err: Error) => void = () => undefined;
  const broken = new Promise<Error>((resolve) => (reportBroken = resolve));
  /** Starts a front on `port`; the first checks that no other server holds it, the others join the first. */
  const start = (port: number, exclusive: boolean): Promise<number> => {
    const module = workerModule(import.meta.url, 'front-worker');
    const worker = new Worker(module.url, { name: `tls-front-${workers.length}`, workerData: { ...common, port, exclusive } satisfies FrontWorkerData, execArgv: module.execArgv });
    workers.push(worker);
    exits.push(new Promise((resolve) => worker.once('exit', () => resolve())));
    const threadId = worker.threadId;
    let failure: Error | undefined;
    worker.on('error', (err) => (failure = err));
    worker.once('exit', (code) => {
      if (closing) return;
      const err = failure ?? new Error(`TLS front thread ${threadId} exited (code ${code})`);
      o.logger.error({ err, threadId }, 'a TLS front thread ended: the server cannot go on accepting connections');
      reportBroken(err);
    });
    return new Promise<number>((resolve, reject) => {
      worker.once('exit', () => reject(failure ?? new Error('TLS front thread exited before listening')));
      worker.on('message', (m: FromFrontMessage) => {
        if (m.type === 'listening') resolve(m.port);
        else if (m.type === 'listen-error') reject(Object.assign(new Error(m.message), { code: m.code, address: o.host, port }));
        else o.logger.warn({ threadId, failures: m.failures }, 'a TLS front could not hand connections to this thread and closed them after their handshakes');
      });
    });
  };
  const stop = async (graceMs: number): Promise<void> => {
    closing = true;
    for (const w of workers) w.postMessage({ type: 'close' } satisfies ToFrontMessage);
    const late = setTimeout(() => workers.forEach((w) => void w.terminate()), graceMs);
    await Promise.all(exits);
    clearTimeout(late);
    await Promise.all(backs.map((b) => new Promise((resolve) => b.close(resolve))));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const port = await start(o.port, true);
    await Promise.all(Array.from({ length: o.workers - 1 }, () => start(port, false)));
    return {
      port,
      broken,
      setSecureContext: (context) => workers.forEach((w) => w.postMessage({ type: 'context', context } satisfies ToFrontMessage)),
      close: stop,
    };
  } catch (err) {
    await stop(0);
    throw err;
  }
}
