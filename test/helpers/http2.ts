/** HTTP/2 requests to a test server (node:http2, ALPN h2), as kubectl and client-go send them. */
import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';

export interface H2Response {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/**
 * One HTTP/2 connection: the CA that verifies the server, and a client certificate if any;
 * `maxSendHeaderBlockLength` lifts node:http2's own 64 KiB bound on the headers this client sends.
 */
export function h2connect(url: string, tls: { ca: string; cert?: string; key?: string; maxSendHeaderBlockLength?: number }): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = connect(url, { ...tls, ALPNProtocols: ['h2'] });
    session.once('connect', () => {
      session.off('error', reject);
      // Errors after the connection are the test's to observe through its streams.
      session.on('error', () => undefined);
      resolve(session);
    });
    session.once('error', reject);
  });
}

/** A stream's request headers: pseudo-headers for the method and path, then the caller's. */
export function h2headers(method: string, path: string, headers: Record<string, string | string[]> = {}): OutgoingHttpHeaders {
  return { [constants.HTTP2_HEADER_METHOD]: method, [constants.HTTP2_HEADER_PATH]: path, ...headers };
}

/** A body's JSON, or undefined when it is not JSON. */
export function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Reads a whole response: status, headers, text and its JSON (when it parses). */
export function h2response(stream: ClientHttp2Stream): Promise<H2Response> {
  return new Promise((resolve, reject) => {
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.once('response', (h) => (headers = h));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.once('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({ status: Number(headers[constants.HTTP2_HEADER_STATUS] ?? 0), headers, text, json: jsonOf(text) });
    });
    stream.once('error', reject);
  });
}

/** One request on an open session. */
export function h2request(
  session: ClientHttp2Session,
  method: string,
  path: string,
  opts: { headers?: Record<string, string | string[]>; body?: string | Buffer } = {},
): Promise<H2Response> {
  const stream = session.request(h2headers(method, path, opts.headers), { endStream: opts.body === undefined });
  if (opts.body !== undefined) stream.end(opts.body);
  return h2response(stream);
}
