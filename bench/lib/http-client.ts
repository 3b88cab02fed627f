/**
 * A minimal HTTPS JSON client for load generators: one keep-alive agent per client, so the figures
 * measure request handling and not TLS handshakes, and no client-side library overhead that would
 * blur the comparison between our API server and the bare-HTTP ceiling.
 */
import https from 'node:https';

export interface HttpTarget {
  /** https://127.0.0.1:PORT */
  url: string;
  caPem: string;
  /** Bearer token sent with every request, if any. */
  token?: string;
}

export interface HttpReply {
  status: number;
  body: string;
}

export interface StreamHandle {
  close(): void;
}

export class HttpClient {
  private readonly agent: https.Agent;
  private readonly base: URL;

  constructor(
    private readonly target: HttpTarget,
    maxSockets = 64,
  ) {
    this.base = new URL(target.url);
    if (this.base.hostname !== '127.0.0.1') throw new Error(`load generators only talk to 127.0.0.1, not ${this.base.hostname}`);
    this.agent = new https.Agent({ keepAlive: true, maxSockets, ca: target.caPem });
  }

  withToken(token: string): HttpClient {
    return new HttpClient({ ...this.target, token }, this.agent.maxSockets);
  }

  request(method: string, path: string, body?: unknown): Promise<HttpReply> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = https.request(
        { ...this.options(method, path), headers: this.headers(payload) },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** A JSON request that must answer 2xx; returns the parsed body. */
  async json<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
    const r = await this.request(method, path, body);
    if (r.status < 200 || r.status > 299) throw new Error(`${method} ${path}: HTTP ${r.status}: ${r.body.slice(0, 300)}`);
    return JSON.parse(r.body) as T;
  }

  /**
   * A newline-delimited JSON stream (a watch): `onLine` gets each parsed line. Resolves once the
   * response headers arrived with 200.
   */
  stream(path: string, onLine: (obj: unknown) => void): Promise<StreamHandle> {
    return new Promise((resolve, reject) => {
      const req = https.request({ ...this.options('GET', path), headers: this.headers(undefined) }, (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`GET ${path}: HTTP ${res.statusCode}`));
          res.resume();
          return;
        }
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (line.trim()) onLine(JSON.parse(line));
          }
        });
        res.on('error', () => {});
        resolve({ close: () => req.destroy() });
      });
      req.on('error', reject);
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }

  private options(method: string, path: string): https.RequestOptions {
    return { method, hostname: this.base.hostname, port: this.base.port, path, agent: this.agent };
  }

  private headers(payload: Buffer | undefined): Record<string, string | number> {
    const h: Record<string, string | number> = { accept: 'application/json' };
    if (this.target.token) h.authorization = `Bearer ${this.target.token}`;
    if (payload) {
      h['content-type'] = 'application/json';
      h['content-length'] = payload.length;
    }
    return h;
  }
}
