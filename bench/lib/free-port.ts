/** A loopback port for children that cannot report the port they bound for :0 (etcd, Prometheus, the controller's metrics). */
import { createServer } from 'node:net';

/** A port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
