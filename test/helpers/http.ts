/**
 * Raw HTTPS requests to a test server (node:https with its CA), for status codes and exact bodies.
 * KUBE_IDENTITY_TEST_PROTOCOL=h2 sends them over HTTP/2 instead (node:http2, one connection each),
 * as kubectl and client-go do, so any suite can be run over either protocol.
 */
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { constants } from 'node:http2';
import { h2connect, h2headers, h2request, jsonOf } from './http2.js';

/** The protocol raw requests and watches use by default. */
const DEFAULT_PROTOCOL = process.env.KUBE_IDENTITY_TEST_PROTOCOL === 'h2' ? 'h2' : 'http/1.1';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** Who a request is from: a bearer token or a TLS client certificate. */
export type Credential = { token: string } | { certPem: string; keyPem: string };

/** The Status a request shed by flow control gets (upstream's wording), telling it to come back after `retryAfterSeconds`. */
export const tooManyRequests = (retryAfterSeconds: number) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'Too many requests, please try again later.',
  reason: 'TooManyRequests',
  details: { retryAfterSeconds },
  code: 429,
});

/** The same with `Retry-After: 1`: what the first request a priority level sheds is told. */
export const TOO_MANY_REQUESTS = tooManyRequests(1);

export interface RawTarget {
  url: string;
  caPem: string;
  /** Sent unless a request says otherwise (the admin kubeconfig's client certificate, on the full server). */
  admin: Credential;
}

/** The Authorization header and TLS client certificate (for node:https or node:tls) that present `credential`. */
export function presenting(credential: Credential): { headers: Record<string, string>; tls: { cert?: string; key?: string } } {
  return 'token' in credential ? { headers: { Authorization: `Bearer ${credential.token}` }, tls: {} } : { headers: {}, tls: { cert: credential.certPem, key: credential.keyPem } };
}

/** The Authorization header and TLS client certificate a request carries. */
function credentials(
  target: RawTarget,
  opts: { anonymous?: boolean; token?: string; client?: { certPem: string; keyPem: string } },
): { headers: Record<string, string>; tls: { cert?: string; key?: string } } {
  if (opts.anonymous) return { headers: {}, tls: {} };
  if (opts.client) return { headers: {}, tls: { cert: opts.client.certPem, key: opts.client.keyPem } };
  return presenting(opts.token !== undefined ? { token: opts.token } : target.admin);
}

export interface RawOptions {
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  /** Send no Authorization header. */
  anonymous?: boolean;
  /** A bearer token instead of the target's admin credential. */
  token?: string;
  /** A TLS client certificate to present (sends no bearer token). */
  client?: { certPem: string; keyPem: string };
  /** Send the path byte for byte, as a Go client may: no WHATWG `..`/`%2e%2e` resolution. */
  verbatimPath?: boolean;
  /** HTTP/2 or HTTP/1.1 (default: KUBE_IDENTITY_TEST_PROTOCOL, else HTTP/1.1). */
  protocol?: 'h2' | 'http/1.1';
}

/** `path` as sent: verbatim, or resolved against the server's URL as node:https resolves it. */
function sentPath(target: RawTarget, path: string, verbatim: boolean | undefined): string {
  if (verbatim) return path;
  const url = new URL(path, target.url);
  return `${url.pathname}${url.search}`;
}

export function raw(target: RawTarget, method: string, path: string, opts: RawOptions = {}): Promise<RawResponse> {
  const body =
    opts.body === undefined ? undefined : Buffer.isBuffer(opts.body) || typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  const who = credentials(target, opts);
  const headers: Record<string, string> = { ...who.headers, ...opts.headers };
  if (body !== undefined) {
    headers['Content-Type'] = opts.contentType ?? 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(body));
  }
  if ((opts.protocol ?? DEFAULT_PROTOCOL) === 'h2') {
    return h2connect(target.url, { ca: target.caPem, ...who.tls }).then(async (session) => {
      try {
        return await h2request(session, method, sentPath(target, path, opts.verbatimPath), { headers, body });
      } finally {
        session.close();
      }
    });
  }
  return new Promise((resolve, reject) => {
    const tls = { ca: target.caPem, ...who.tls };
    const req = https.request(new URL(path, target.url), { method, headers, ...tls, ...(opts.verbatimPath ? { path } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: jsonOf(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export interface WatchStream {
  status: number;
  headers: IncomingHttpHeaders;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  events: any[];
  /** Resolves when `n` events have arrived (or rejects after `ms`). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  waitFor(n: number, ms?: number): Promise<any[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** The events of a watch response as they arrive, and its end. */
function collectEvents(body: NodeJS.ReadableStream, status: number, headers: IncomingHttpHeaders, close: () => void): WatchStream {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const events: any[] = [];
  let buffer = '';
  const waiters: (() => void)[] = [];
  let endResolve: () => void = () => undefined;
  const ended = new Promise<void>((r) => (endResolve = r));
  body.on('data', (c: Buffer) => {
    buffer += c.toString('utf8');
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim() !== '') events.push(JSON.parse(line));
    }
    for (const w of waiters.splice(0)) w();
  });
  const finish = (): void => {
    endResolve();
    for (const w of waiters.splice(0)) w();
  };
  body.on('end', finish);
  body.on('error', finish);
  body.on('close', finish);
  return {
    status,
    headers,
    events,
    ended,
    waitFor(n, ms = 5000) {
      return new Promise((ok, fail) => {
        const timer = setTimeout(() => fail(new Error(`timed out waiting for ${n} events, got ${JSON.stringify(events)}`)), ms);
        const check = (): void => {
          if (events.length >= n) {
            clearTimeout(timer);
            ok(events);
          } else waiters.push(check);
        };
        check();
      });
    },
    close,
  };
}

/** Opens a watch and collects its newline-delimited events. */
export function openWatch(target: RawTarget, path: string, headers: Record<string, string> = {}, protocol = DEFAULT_PROTOCOL): Promise<WatchStream> {
  const who = credentials(target, {});
  if (protocol === 'h2') {
    return h2connect(target.url, { ca: target.caPem, ...who.tls }).then(
      (session) =>
        new Promise((resolve, reject) => {
          const stream = session.request(h2headers('GET', sentPath(target, path, false), { ...who.headers, ...headers }));
          stream.once('error', reject);
          stream.once('close', () => session.close());
          stream.once('response', (h) => {
            stream.off('error', reject);
            resolve(collectEvents(stream, Number(h[constants.HTTP2_HEADER_STATUS]), h, () => stream.close(constants.NGHTTP2_CANCEL)));
          });
        }),
    );
  }
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(path, target.url),
      { method: 'GET', headers: { ...who.headers, ...headers }, ca: target.caPem, ...who.tls },
      (res) => resolve(collectEvents(res, res.statusCode ?? 0, res.headers, () => req.destroy())),
    );
    req.on('error', (e) => {
      if ((e as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(e);
    });
    req.end();
  });
}

/** Who a request acts as: the target's admin, a user the admin impersonates (with groups), or nobody. */
export type Acting = 'admin' | 'anonymous' | { user: string; groups?: string[] };

/** `raw` as `who`: the admin's credential with Impersonate-User/-Group headers for a user. */
export function rawAs(target: RawTarget, who: Acting, method: string, path: string, body?: unknown): Promise<RawResponse> {
  if (who === 'admin') return raw(target, method, path, { body });
  if (who === 'anonymous') return raw(target, method, path, { body, anonymous: true });
  const headers: Record<string, string> = { 'Impersonate-User': who.user };
  for (const g of who.groups ?? []) headers['Impersonate-Group'] = g;
  return raw(target, method, path, { body, headers });
}
