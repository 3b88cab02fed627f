/**
 * What a request knows of the connection under it, whichever protocol carries it. The handlers see
 * one request type (node:http's); over HTTP/2 it is node:http2's compatibility request, whose
 * connection is the session's TLS socket, whose headers join repeats, and which has no Host
 * header, no `Connection: close` and no `headersDistinct`. These helpers give the same answers
 * for both.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2Session } from 'node:http2';
import type { TLSSocket } from 'node:tls';

/** True when the request came over HTTP/2 (ALPN h2): it is node:http2's compatibility request. */
export function isHttp2(req: IncomingMessage | Http2ServerRequest): req is Http2ServerRequest {
  return req.httpVersionMajor === 2;
}

function sessionOf(req: IncomingMessage): Http2Session | undefined {
  return isHttp2(req) ? req.stream.session : undefined;
}

/**
 * The TLS connection a request arrived on: its socket for HTTP/1.1, the session's for HTTP/2 (the
 * same object for every stream of the session, so what is remembered per connection is shared).
 */
export function connectionOf(req: IncomingMessage): { key: object; socket: TLSSocket } | undefined {
  const session = sessionOf(req);
  if (session) return session.socket ? { key: session, socket: session.socket as TLSSocket } : undefined;
  return { key: req.socket, socket: req.socket as TLSSocket };
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
