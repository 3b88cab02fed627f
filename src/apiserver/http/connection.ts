/**
 * What a request knows of the connection under it, whichever protocol carries it. The handlers see
 * one request type (node:http's); over HTTP/2 it is node:http2's compatibility request, whose
 * connection is the session's TLS socket, whose headers join repeats, and which has no Host
 * header, no `Connection: close` and no `headersDistinct`. These helpers give the same answers
 * for both.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2Session } from 'node:http2';
import type { Duplex } from 'node:stream';
import type { DetailedPeerCertificate, PeerCertificate, TLSSocket } from 'node:tls';

/** True when the request came over HTTP/2 (ALPN h2): it is node:http2's compatibility request. */
export function isHttp2(req: IncomingMessage | Http2ServerRequest): req is Http2ServerRequest {
  return req.httpVersionMajor === 2;
}

function sessionOf(req: IncomingMessage): Http2Session | undefined {
  return isHttp2(req) ? req.stream.session : undefined;
}

/**
 * The connection a request arrived on: its socket for HTTP/1.1, the session's for HTTP/2 (the same
 * object for every stream of the session, so what is remembered per connection is shared).
 */
function connectionOf(req: IncomingMessage): { key: object; socket: Duplex } | undefined {
  const session = sessionOf(req);
  if (session) return session.socket ? { key: session, socket: session.socket } : undefined;
  return { key: req.socket, socket: req.socket };
}

/** What the TLS handshake of a connection established: the chain its client presented, and where it is. */
export interface Peer {
  /** The DER certificates the client presented, leaf first (unverified: the x509 authenticator checks them). */
  chain: Uint8Array[];
  remoteAddress?: string;
  remotePort?: number;
}

/**
 * A plaintext connection whose TLS a front worker terminated carries its peer here (fronts.ts). A
 * symbol property, not a WeakMap keyed by the socket: an HTTP/2 session shows its socket through a
 * proxy, which forwards property reads but is not the socket's identity.
 */
const FRONTED_PEER = Symbol('kube-identity.frontedPeer');

/** Marks a connection handed over by a front worker with the peer its handshake established. */
export function setFrontedPeer(socket: Duplex, peer: Peer): void {
  (socket as Duplex & { [FRONTED_PEER]?: Peer })[FRONTED_PEER] = peer;
}

/**
 * Each connection's peer, read once: it cannot change on a connection (renegotiation is disabled, as
 * Go's TLS server never supports it), and the same chain array lets the x509 authenticator reuse its
 * verification for every request of a keep-alive connection or of the streams of an HTTP/2 one.
 */
const peers = new WeakMap<object, Peer>();

/** The peer of the connection a request came on, whether this process or a front worker did its TLS. */
export function peerOf(req: IncomingMessage): Peer {
  const connection = connectionOf(req);
  if (!connection) return { chain: [] };
  let peer = peers.get(connection.key);
  if (!peer) peers.set(connection.key, (peer = readPeer(connection.socket)));
  return peer;
}

function readPeer(socket: Duplex & { [FRONTED_PEER]?: Peer }): Peer {
  const fronted = socket[FRONTED_PEER];
  if (fronted) return fronted;
  const tls = socket as TLSSocket;
  const chain = typeof tls.getPeerCertificate === 'function' ? peerChain(tls) : [];
  return { chain, remoteAddress: tls.remoteAddress, remotePort: tls.remotePort };
}

/** The DER chain a TLS socket's client presented, leaf first (also what a front worker sends its back). */
export function peerChain(socket: TLSSocket): Uint8Array[] {
  const chain: Uint8Array[] = [];
  let cert: PeerCertificate | DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  const seen = new Set<PeerCertificate>();
  while (cert && cert.raw && !seen.has(cert)) {
    seen.add(cert);
    chain.push(new Uint8Array(cert.raw));
    const next: DetailedPeerCertificate | undefined = (cert as DetailedPeerCertificate).issuerCertificate;
    if (!next || next === cert || next.raw?.equals(cert.raw)) break;
    cert = next;
  }
  return chain;
}

/**
 * Every value of each request header, as node:http's `headersDistinct` gives them. HTTP/2 headers
 * come from the raw list: the compatibility layer joins a repeated header (two Impersonate-Group
 * fields) into one comma-separated value.
 */
export function distinctHeaders(req: IncomingMessage): NodeJS.Dict<string[]> {
  if (!isHttp2(req)) return req.headersDistinct;
  const out: NodeJS.Dict<string[]> = {};
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (name.startsWith(':')) continue;
    (out[name] ??= []).push(raw[i + 1]!);
  }
  return out;
}

/** The authority the client addressed: Host over HTTP/1.1, :authority over HTTP/2. */
export function requestHost(req: IncomingMessage): string | undefined {
  const authority = req.headers[':authority'];
  return req.headers.host ?? (typeof authority === 'string' ? authority : undefined);
}

/**
 * Ends the connection once this response is done, as Go's servers do for `Connection: close`: over
 * HTTP/1.1 the header, over HTTP/2 a GOAWAY now (graceful: the session's streams under way, this one
 * included, finish; the client opens new ones elsewhere).
 */
export function closeConnectionAfter(req: IncomingMessage, res: ServerResponse): void {
  const session = sessionOf(req);
  if (session) {
    if (!session.closed) session.close();
  } else if (!res.headersSent) res.setHeader('Connection', 'close');
}
