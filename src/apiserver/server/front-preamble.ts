/**
 * What a front worker says first on each plaintext connection it hands to the back (fronts.ts): the
 * back's secret, proving the connection comes from one of its own fronts, then what the TLS
 * handshake established (the client's chain, its address, the ALPN protocol). Without the secret
 * the connection is closed before anything of it is read as a peer.
 *
 * Layout: 32 bytes of secret, a 32-bit big-endian length, that many bytes of JSON. A front sends the
 * secret as soon as it connects and the rest once it has a connection to hand over, maybe much later
 * (front-worker.ts keeps connections to the back open ahead): only the secret has a deadline.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Peer } from '../http/connection.js';

export const SECRET_BYTES = 32;

/** A peer chain is a few kB; a preamble beyond this is refused, not buffered. */
const MAX_BODY_BYTES = 256 * 1024;
const LENGTH_BYTES = 4;

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

/** The preamble after the secret: the connection's length-prefixed JSON. */
export function encodeConnection(c: FrontedConnection): Buffer {
  const body: Body = { chain: c.chain.map((der) => Buffer.from(der).toString('base64')), remoteAddress: c.remoteAddress, remotePort: c.remotePort, protocol: c.protocol };
  const json = Buffer.from(JSON.stringify(body));
  const length = Buffer.alloc(LENGTH_BYTES);
  length.writeUInt32BE(json.length);
  return Buffer.concat([length, json]);
}

/**
 * Reads the preamble off `socket` (leaving what follows it unread); undefined, with the socket
 * destroyed, when it does not prove `secret` within `timeoutMs` or is not well formed.
 */
export function readPreamble(socket: Socket, secret: Buffer, timeoutMs: number): Promise<FrontedConnection | undefined> {
  return new Promise((resolve) => {
    let proven = false;
    let length: number | undefined;
    const finish = (c: FrontedConnection | undefined): void => {
      clearTimeout(timer);
      socket.off('readable', onReadable);
      socket.off('close', onClose).off('end', onClose);
      if (!c) socket.destroy();
      resolve(c);
    };
    const onClose = (): void => finish(undefined);
    const timer = setTimeout(onClose, timeoutMs);
    const onReadable = (): void => {
      if (!proven) {
        const proof = socket.read(SECRET_BYTES) as Buffer | null;
        if (!proof) return;
        if (!timingSafeEqual(proof, secret)) return finish(undefined);
        // One of our fronts: its connection comes when it has one.
        proven = true;
        clearTimeout(timer);
      }
      if (length === undefined) {
        const header = socket.read(LENGTH_BYTES) as Buffer | null;
        if (!header) return;
        length = header.readUInt32BE();
        if (length > MAX_BODY_BYTES) return finish(undefined);
      }
      const json = socket.read(length) as Buffer | null;
      if (!json) return;
      finish(parseBody(json));
    };
    socket.on('readable', onReadable);
    // (The back's sockets allow half-open: a front's spare it closed ends without closing.)
    socket.once('close', onClose).once('end', onClose);
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
