/**
 * What a front worker says first on each plaintext connection it hands to the back (fronts.ts): the
 * back's secret, proving the connection comes from one of its own fronts, then what the TLS
 * handshake established (the client's chain, its address, the ALPN protocol). Without the secret
 * the connection is closed before anything of it is read as a peer.
 *
 * Layout: 32 bytes of secret, a 32-bit big-endian length, that many bytes of JSON.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Peer } from '../http/connection.js';

export const SECRET_BYTES = 32;

/** A peer chain is a few kB; a preamble beyond this is refused, not buffered. */
const MAX_BODY_BYTES = 256 * 1024;
const HEADER_BYTES = SECRET_BYTES + 4;

/** A handed-over connection: its peer and the protocol ALPN chose (`h2` or `http/1.1`). */
export interface FrontedConnection extends Peer {
  protocol: string;
}

interface Body {
  chain: string[];
  remoteAddress?: string;
  remotePort?: number;
  protocol: string;
}

export function encodePreamble(secret: Buffer, c: FrontedConnection): Buffer {
  const body: Body = { chain: c.chain.map((der) => Buffer.from(der).toString('base64')), remoteAddress: c.remoteAddress, remotePort: c.remotePort, protocol: c.protocol };
  const json = Buffer.from(JSON.stringify(body));
  const header = Buffer.alloc(HEADER_BYTES);
  secret.copy(header);
  header.writeUInt32BE(json.length, SECRET_BYTES);
  return Buffer.concat([header, json]);
}

/**
 * Reads the preamble off `socket` (leaving what follows it unread) within `timeoutMs`; undefined,
 * with the socket destroyed, when it does not prove `secret` or is not well formed.
 */
export function readPreamble(socket: Socket, secret: Buffer, timeoutMs: number): Promise<FrontedConnection | undefined> {
  return new Promise((resolve) => {
    let length: number | undefined;
    const finish = (c: FrontedConnection | undefined): void => {
      clearTimeout(timer);
      socket.off('readable', onReadable);
      socket.off('close', onClose);
      if (!c) socket.destroy();
      resolve(c);
    };
    const onClose = (): void => finish(undefined);
    const timer = setTimeout(onClose, timeoutMs);
    const onReadable = (): void => {
      if (length === undefined) {
        const header = socket.read(HEADER_BYTES) as Buffer | null;
        if (!header) return;
        length = header.readUInt32BE(SECRET_BYTES);
        if (!timingSafeEqual(header.subarray(0, SECRET_BYTES), secret) || length > MAX_BODY_BYTES) return finish(undefined);
      }
      const json = socket.read(length) as Buffer | null;
      if (!json) return;
      finish(parseBody(json));
    };
    socket.on('readable', onReadable);
    socket.once('close', onClose);
  });
}

function parseBody(json: Buffer): FrontedConnection | undefined {
  try {
    const b = JSON.parse(json.toString('utf8')) as Body;
    if (!Array.isArray(b.chain) || typeof b.protocol !== 'string') return undefined;
    return { chain: b.chain.map((c) => new Uint8Array(Buffer.from(c, 'base64'))), remoteAddress: b.remoteAddress, remotePort: b.remotePort, protocol: b.protocol };
  } catch {
    return undefined;
  }
}
