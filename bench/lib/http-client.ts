/**
 * A minimal HTTPS JSON client for load generators, on undici: one keep-alive connection pool per
 * client, so the figures measure request handling and not TLS handshakes, and as little client
 * CPU as node offers (undici costs about two thirds of node:https per request here), because the
 * load generator shares the machine with the processes it measures.
 */
import { Pool } from 'undici';

export interface HttpTarget {
  /** https://127.0.0.1:PORT */
  url: string;
  caPem: string;
  /** Bearer token sent with every request, if any. */
  token?: string;
  /** TLS client certificate presented on every connection (the admin kubeconfig's), if any. */
  client?: { certPem: string; keyPem: string };
}

export interface HttpReply {
  status: number;
  body: string;
}

export interface StreamHandle {
  close(): void;
}

export class HttpClient {
  private readonly pool: Pool;

  constructor(
    private readonly target: HttpTarget,
    private readonly maxSockets = 64,
  ) {
    const base = new URL(target.url);
    if (base.hostname !== '127.0.0.1') throw new Error(`load generators only talk to 127.0.0.1, not ${base.hostname}`);
    // HTTP/1.1, which the bare node:https server each ratio divides by speaks too (undici would take
    // the h2 the API server offers).
    this.pool = new Pool(base.origin, {
      connections: Number.isFinite(maxSockets) ? maxSockets : null,
      allowH2: false,
      connect: { ca: target.caPem, cert: target.client?.certPem, key: target.client?.keyPem },
    });
  }

  /** The same server as the user of `token` (without this client's certificate, which would win). */
  withToken(token: string): HttpClient {
    return new HttpClient({ url: this.target.url, caPem: this.target.caPem, token }, this.maxSockets);
  }

  /** With `timeoutMs`, the request is abandoned (rejected) when no full answer came by then. */
  async request(method: string, path: string, body?: unknown, timeoutMs?: number): Promise<HttpReply> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const signal = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
    const res = await this.pool.request({ method: method as 'GET', path, headers: this.headers(payload !== undefined), body: payload, signal });
    return { status: res.statusCode, body: await res.body.text() };
  }

  /** A JSON request that must answer 2xx; returns the parsed body. */
  async json<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
    const r = await this.request(method, path, body);
    if (r.status < 200 || r.status > 299) throw new Error(`${method} ${path}: HTTP ${r.status}: ${r.body.slice(0, 300)}`);
    return JSON.parse(r.body) as T;
  }

  /**
   * A newline-delimited JSON stream (a watch): `onLine` gets each parsed line, or only those that
   * `wanted` accepts (a cheap text test that spares the load generator parsing lines it ignores).
   * Resolves once the response headers arrived with 200; `onEnd` runs once when the stream ends or fails.
   */
  async stream(path: string, onLine: (obj: unknown) => void, wanted: (line: string) => boolean = () => true, onEnd?: () => void): Promise<StreamHandle> {
    const abort = new AbortController();
    const res = await this.pool.request({ method: 'GET', path, headers: this.headers(false), signal: abort.signal });
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new Error(`GET ${path}: HTTP ${res.statusCode}`);
    }
    let buf = '';
    res.body.setEncoding('utf8');
    res.body.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim() && wanted(line)) onLine(JSON.parse(line));
      }
    });
    let ended = false;
    const end = (): void => {
      if (!ended) onEnd?.();
      ended = true;
    };
    res.body.on('error', end).on('end', end).on('close', end);
    return { close: () => abort.abort() };
  }

  close(): void {
    void this.pool.destroy();
  }

  private headers(json: boolean): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json' };
    if (this.target.token) h.authorization = `Bearer ${this.target.token}`;
    if (json) h['content-type'] = 'application/json';
    return h;
  }
}
