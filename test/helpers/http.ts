/** Raw HTTPS requests to a test server (node:https with its CA), for status codes and exact bodies. */
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** Who a request is from: a bearer token or a TLS client certificate. */
export type Credential = { token: string } | { certPem: string; keyPem: string };

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
  return new Promise((resolve, reject) => {
    const tls = { ca: target.caPem, ...who.tls };
    const req = https.request(new URL(path, target.url), { method, headers, ...tls, ...(opts.verbatimPath ? { path } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
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

/** Opens a watch and collects its newline-delimited events. */
export function openWatch(target: RawTarget, path: string, headers: Record<string, string> = {}): Promise<WatchStream> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(path, target.url),
      { method: 'GET', headers: { ...credentials(target, {}).headers, ...headers }, ca: target.caPem, ...credentials(target, {}).tls },
      (res) => {
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        const events: any[] = [];
        let buffer = '';
        const waiters: (() => void)[] = [];
        let endResolve: () => void = () => undefined;
        const ended = new Promise<void>((r) => (endResolve = r));
        res.on('data', (c: Buffer) => {
          buffer += c.toString('utf8');
          let nl: number;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl);
            buffer = buffer.slice(nl + 1);
            if (line.trim() !== '') events.push(JSON.parse(line));
          }
          for (const w of waiters.splice(0)) w();
        });
        res.on('end', () => {
          endResolve();
          for (const w of waiters.splice(0)) w();
        });
        res.on('error', () => endResolve());
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
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
          close: () => req.destroy(),
        });
      },
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
