/**
 * A tiny authoritative DNS server on 127.0.0.1 (UDP) answering A and AAAA queries from a table, so
 * a test controls what names resolve to; unknown names get NXDOMAIN. `resolveHost` is a resolver
 * that asks only this server, over the real protocol (node:dns with setServers).
 */
import { createSocket, type Socket } from 'node:dgram';
import { promises as dns } from 'node:dns';
import { isIPv4, isIPv6 } from 'node:net';

export interface DnsServer {
  port: number;
  /** name (lower case, no trailing dot) → addresses; change it at will. */
  records: Map<string, string[]>;
  resolveHost(name: string): Promise<string[]>;
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

function readName(msg: Buffer, pos: number): { name: string; end: number } {
  const labels: string[] = [];
  while ((msg[pos] ?? 0) !== 0) {
    const len = msg[pos] ?? 0;
    labels.push(msg.subarray(pos + 1, pos + 1 + len).toString('latin1'));
    pos += 1 + len;
  }
  return { name: labels.join('.').toLowerCase(), end: pos + 1 };
}

function ipBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  const [head = '', tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = ip.includes('::') && tail ? tail.split(':') : [];
  const groups = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return Buffer.from(groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 255]));
}

function answer(query: Buffer, records: Map<string, string[]>): Buffer {
  const { name, end } = readName(query, 12);
  const qtype = query.readUInt16BE(end);
  const question = query.subarray(12, end + 4);
  const known = records.get(name);
  const ips = (known ?? []).filter((ip) => (qtype === TYPE_A ? isIPv4(ip) : qtype === TYPE_AAAA ? isIPv6(ip) : false));
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  header.writeUInt16BE(0x8400 | (known ? 0 : 3), 2); // response, authoritative; NXDOMAIN when unknown
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(ips.length, 6);
  const rrs = ips.map((ip) => {
    const data = ipBytes(ip);
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0);
    rr.writeUInt16BE(qtype, 2);
    rr.writeUInt16BE(1, 4);
    rr.writeUInt32BE(5, 6);
    rr.writeUInt16BE(data.length, 10);
    return Buffer.concat([rr, data]);
  });
  return Buffer.concat([header, question, ...rrs]);
}

export async function startDnsServer(records: Record<string, string[]> = {}): Promise<DnsServer> {
  const table = new Map(Object.entries(records));
  const socket: Socket = createSocket('udp4');
  socket.on('message', (msg, from) => socket.send(answer(msg, table), from.port, from.address));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const port = socket.address().port;
  const resolver = new dns.Resolver({ timeout: 500, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  return {
    port,
    records: table,
    async resolveHost(name) {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
      if (v4.status === 'rejected' && v6.status === 'rejected') throw v4.reason;
      return [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
