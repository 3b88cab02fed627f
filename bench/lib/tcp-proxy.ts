/**
 * A TCP proxy on a free loopback port in front of one address, which a fault test can cut: while
 * partitioned it resets every connection it holds and every new one, so the client on its side sees
 * the far end vanish (a partition without a firewall), until it is healed.
 */
import net from 'node:net';

export interface TcpProxy {
  /** host:port clients connect to. */
  address: string;
  partition(cut: boolean): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let cut = false;
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (cut) {
      client.resetAndDestroy();
      return;
    }
    const upstream = new net.Socket();
    open.add(client);
    open.add(upstream);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    upstream.connect(target.port, target.host);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    partition(value) {
      cut = value;
      // A socket still connecting is destroyed (a reset would wait for the connection).
      if (!value) return;
      for (const s of [...open]) {
        if (s.connecting) s.destroy();
        else s.resetAndDestroy();
      }
    },
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
