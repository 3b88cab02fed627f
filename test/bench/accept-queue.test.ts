import { connect, createServer, type Server, type Socket } from 'node:net';
import { acceptQueueLength } from '../../bench/lib/accept-queue.js';

const servers: Server[] = [];
const clients: Socket[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

function listening(port: number, reusePort: boolean): Promise<Server> {
  const server = createServer((socket) => socket.destroy());
  servers.push(server);
  return new Promise((resolve, reject) => server.once('error', reject).listen({ port, host: '127.0.0.1', reusePort }, () => resolve(server)));
}

/** Opens `n` connections and returns once the kernel has queued them all, before this loop can turn and accept any. */
async function queueConnections(port: number, n: number): Promise<number> {
  for (let i = 0; i < n; i++) clients.push(connect(port, '127.0.0.1').on('error', () => undefined));
  await new Promise<void>((resolve) => process.nextTick(resolve));
  const deadline = Date.now() + 2000;
  while (acceptQueueLength(port) < n && Date.now() < deadline);
  return acceptQueueLength(port);
}

it('counts the connections waiting to be accepted on a port, then none once accepted', async () => {
  const server = await listening(0, false);
  const port = (server.address() as { port: number }).port;
  expect(acceptQueueLength(port)).toBe(0);
  expect(await queueConnections(port, 12)).toBe(12);
  const accepted = new Promise<void>((resolve) => {
    let n = 0;
    server.on('connection', () => ++n === 12 && resolve());
  });
  await accepted;
  expect(acceptQueueLength(port)).toBe(0);
});

it('sums the queues of every socket listening on the port (SO_REUSEPORT)', async () => {
  const first = await listening(0, true);
  const port = (first.address() as { port: number }).port;
  await listening(port, true);
  expect(await queueConnections(port, 20)).toBe(20);
});
