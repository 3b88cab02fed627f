/**
 * Connections waiting in the kernel to be accepted on a port: the sum of the accept queues of the
 * sockets listening on it (several with SO_REUSEPORT, as with TLS fronts), read from /proc/net/tcp and
 * tcp6, where a LISTEN socket's rx_queue is its accept queue's length. The fleet samples it because
 * libuv accepts one connection per listening socket per event-loop turn: under a join storm new
 * connections wait here, before any TLS, and a wait past the client's 10 s is a connect timeout.
 * 0 where /proc is not readable.
 */
import { readFileSync } from 'node:fs';

const LISTEN = '0A';

export function acceptQueueLength(port: number): number {
  let waiting = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue ...
      const [, local, , state, queues] = line.trim().split(/\s+/);
      if (state !== LISTEN || Number.parseInt(local?.split(':').pop() ?? '', 16) !== port) continue;
      waiting += Number.parseInt(queues?.split(':')[1] ?? '0', 16) || 0;
    }
  }
  return waiting;
}
