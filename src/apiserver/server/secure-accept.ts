/**
 * How the secure port takes its connections and admits them to TLS, on the main thread's listener and
 * on each TLS front alike (secure-server.ts, front-worker.ts).
 *
 * Accepting: ACCEPTORS listening sockets share the port (SO_REUSEPORT; the kernel spreads new
 * connections over them), because libuv accepts one connection per listening socket per event-loop
 * turn (libuv#3696, in Node since libuv 1.45). With one socket, a join storm's connections waited in
 * the kernel's accept queue, in the order they came, past the kubelets' 10 s handshake timeout. There
 * are four times as many sockets as handshakes started per turn, so that the kernel's queue stays
 * short even when a turn is long: a connection's wait is then ours to see from about when its client
 * connected, and connections whose clients gave up do not take live ones' turns to be accepted.
 *
 * Admitting: connections are accepted paused (`pauseOnConnect`) into a queue of our own, so the one
 * queue that decides which handshake runs next is ours, not the kernel's. A connection joins it once
 * its ClientHello has arrived; at most HANDSHAKES_PER_TURN handshakes are started per loop turn,
 * oldest connection first, among those accepted less than START_SHARE of a client's handshake timeout
 * ago; one that waited longer, or whose client closed it while it waited, is closed unread (its
 * ClientHello is read out of the socket so that its end is seen). So an overloaded loop spends its
 * turns on handshakes that can still finish for their clients, in the order they came (a storm of
 * reconnections that fits in the clients' timeout is served without one), instead of dividing its
 * turns among every connection that came until each finishes too late (the collapse seen in session
 * 11, docs/performance-history.md); the client of a connection closed unread learns it then, not at its timeout.
 *
 * The queue holds at most the listen backlog's number of connections: past it, the one that waited
 * longest is closed for each new one. A paused socket reads nothing, so one whose client gave up
 * (a connect timeout, then a new dial) kept its descriptor until the queue's own limit; behind a TLS
 * front, whose loop accepts ACCEPTORS connections a turn, a 3,000-node join's redials filled the
 * process's 20,000 descriptors with such sockets, and the front could then reach neither new clients
 * nor the back (EMFILE; docs/performance-history.md, session 13). The oldest are the nearest to their
 * clients' timeout.
 *
 * The cap counts handshakes started per turn, not handshakes in progress: a handshake waiting for
 * its client costs nothing, and a count of them could be held by clients that send a ClientHello and
 * stall (64 such connections every 10 s would lock everyone out). A connection that sends nothing
 * never reaches the queue, and is closed once it has waited a client's whole timeout.
 */
import { createServer, type AddressInfo, type ListenOptions, type Server as NetServer, type Socket } from 'node:net';
import type { Server as TlsServer } from 'node:tls';

/** Listening sockets per listener (the main thread's, or each front's): four per handshake started in a turn. */
export const ACCEPTORS = 64;

/**
 * Handshakes started per loop turn: a server's first flight (key exchange and signature) costs
 * 0.5–0.6 ms of CPU here, so sixteen keep a turn's new handshake work near 10 ms, and the
 * handshakes started the turn before finish (their clients' flights are read) in the turns between.
 */
export const HANDSHAKES_PER_TURN = 16;

/** Go's TLSHandshakeTimeout (client-go's, the kubelet's, kubectl's): a client gives up after 10 s. */
export const HANDSHAKE_WAIT_MS = 10_000;

/**
 * The share of a client's handshake timeout within which its handshake may start: the rest (2 s of
 * 10) is left for it to finish, the client's flight and the server's turns to read it included.
 */
const START_SHARE = 0.8;

export interface AcceptOptions {
  host: string;
  port: number;
  backlog: number;
  /**
   * Check first that no other server holds the port: SO_REUSEPORT must not let a second server start
   * on it and split the connections with this one (upstream's --permit-port-sharing is off by
   * default). False for a listener joining one of this process's own (a second TLS front).
   */
  exclusive: boolean;
  /** How long an accepted connection may wait for its handshake to start (default HANDSHAKE_WAIT_MS; tests shorten it). */
  waitMs?: number;
}

export interface Accepting {
  port: number;
  /** Stops accepting and closes the connections still waiting; resolves once every connection accepted here has closed. */
  close(): Promise<void>;
}

/** An accepted connection waiting for its handshake to start. */
interface Waiting {
  socket: Socket;
  /** When it was accepted (performance.now()). */
  since: number;
  /** What its client sent so far (its ClientHello), read out so that the stream's end can be seen behind it. */
  sent: Buffer[];
  /** Removes the listeners the queue put on it. */
  release(): void;
}

/**
 * How much of what a waiting client sends is read and held: a ClientHello in a few records. What
 * comes past it stays in the socket, whose end is then seen only once its handshake starts.
 */
const HELD_BYTES = 16 * 1024;

/** The options node:net copies from a server onto each socket it accepts. */
interface NetSocketDefaults {
  noDelay: boolean;
  keepAlive: boolean;
  keepAliveInitialDelay: number;
  highWaterMark: number;
  allowHalfOpen: boolean;
}

/** Accepts for `server` (which never listens itself) on ACCEPTORS sockets sharing the port. */
export async function acceptForTls(server: TlsServer, o: AcceptOptions): Promise<Accepting> {
  const queue = handshakeQueue(server, o.waitMs ?? HANDSHAKE_WAIT_MS, o.backlog);
  const { noDelay, keepAlive, keepAliveInitialDelay, highWaterMark, allowHalfOpen } = server as TlsServer & NetSocketDefaults;
  const acceptors = Array.from({ length: ACCEPTORS }, () =>
    createServer({ noDelay, keepAlive, keepAliveInitialDelay, highWaterMark, allowHalfOpen, pauseOnConnect: true }, queue.accepted),
  );
  const port = o.exclusive ? await freePort(o.host, o.port) : o.port;
  try {
    await Promise.all(acceptors.map((a) => listenOn(a, { port, host: o.host, backlog: o.backlog, reusePort: true })));
  } catch (err) {
    for (const a of acceptors) if (a.listening) a.close();
    queue.close();
    throw err;
  }
  return {
    port,
    async close() {
      const closed = Promise.all(acceptors.map((a) => new Promise<void>((resolve) => a.close(() => resolve()))));
      queue.close();
      await closed;
    },
  };
}

/**
 * The connections accepted and not yet handed to TLS: `unheard` until their first bytes arrive (in
 * the order accepted), then `heard`, ordered by when they were accepted, the newest last.
 */
function handshakeQueue(server: TlsServer, waitMs: number, limit: number) {
  const unheard = new Set<Waiting>();
  let heard: Waiting[] = [];
  let scheduled: NodeJS.Immediate | undefined;

  /** Closes, unread, the connection that has waited longest (the first of either list). */
  const closeOldest = (): void => {
    const u = unheard.values().next().value;
    const h = heard[0];
    const w = h && (!u || h.since < u.since) ? heard.shift() : u;
    if (!w) return;
    unheard.delete(w);
    w.release();
    w.socket.destroy();
  };

  const startBy = waitMs * START_SHARE;
  const admit = (): void => {
    scheduled = undefined;
    const now = performance.now();
    let started = 0;
    while (started < HANDSHAKES_PER_TURN && heard.length > 0) {
      const w = heard.shift()!;
      w.release();
      if (w.socket.destroyed) continue;
      if (now - w.since >= startBy) {
        w.socket.destroy();
        continue;
      }
      // The TLS socket reads what the stream holds before what comes from the kernel.
      if (w.sent.length > 0) w.socket.unshift(Buffer.concat(w.sent));
      server.emit('connection', w.socket);
      started++;
    }
    if (heard.length > 0) scheduled = setImmediate(admit);
  };

  const hear = (w: Waiting): void => {
    unheard.delete(w);
    // Insert by accept time; first bytes mostly come in that order, so this is nearly always the end.
    let i = heard.length;
    while (i > 0 && heard[i - 1]!.since > w.since) i--;
    heard.splice(i, 0, w);
    scheduled ??= setImmediate(admit);
  };

  /** Closes, unread, what waited too long (checked ten times per wait limit). */
  const sweep = (): void => {
    const oldest = performance.now() - waitMs;
    for (const w of unheard) {
      if (w.since > oldest) break;
      unheard.delete(w);
      w.release();
      w.socket.destroy();
    }
    if (heard.length === 0 || heard[0]!.since > oldest) return;
    heard = heard.filter((w) => {
      if (w.since > oldest && !w.socket.destroyed) return true;
      w.release();
      w.socket.destroy();
      return false;
    });
  };
  const sweeper = setInterval(sweep, waitMs / 10).unref();

  return {
    accepted(socket: Socket): void {
      if (unheard.size + heard.length >= limit) closeOldest();
      let held = 0;
      const onReadable = (): void => {
        // Read out, so that the end of the stream (a client that gave up) is seen now, not after a
        // handshake for nobody; at the end, read() returns null and lets 'end' follow.
        const chunk = socket.read() as Buffer | null;
        if (!chunk) return;
        w.sent.push(chunk);
        held += chunk.length;
        if (held >= HELD_BYTES) socket.off('readable', onReadable);
        if (w.sent.length === 1) hear(w);
      };
      const onGone = (): void => {
        // (A heard connection stays in its list; admission passes over a destroyed socket.)
        unheard.delete(w);
        socket.destroy();
      };
      const w: Waiting = {
        socket,
        since: performance.now(),
        sent: [],
        release() {
          socket.off('readable', onReadable).off('end', onGone).off('error', onGone).off('close', onGone);
        },
      };
      socket.on('readable', onReadable).once('end', onGone).once('error', onGone).once('close', onGone);
      unheard.add(w);
    },
    close(): void {
      clearInterval(sweeper);
      if (scheduled) clearImmediate(scheduled);
      for (const w of [...unheard, ...heard]) {
        w.release();
        w.socket.destroy();
      }
      unheard.clear();
      heard = [];
    },
  };
}

function listenOn(server: NetServer, options: ListenOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * The port to bind (a free one for 0), checked free with a listener that shares nothing, so a second
 * server fails with EADDRINUSE as before. A port the probe found free is bound again at once.
 */
async function freePort(host: string, port: number): Promise<number> {
  const probe = createServer();
  await listenOn(probe, { port, host });
  const bound = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return bound;
}
