/**
 * One HTTP/1.1 connection pool (http1.ts) per transport config, as client-go keeps one per TLS config: requests
 * whose TLS options are equal share keep-alive connections (no handshake per request), and a change
 * of options (a rotated client certificate or CA in the kubeconfig) gets a new pool while the old
 * one finishes its in-flight requests and closes.
 */
import { Http1Pool } from './http1.js';

/** The TLS settings client-node derives from a kubeconfig; equal values mean the same transport. */
export interface TlsOptions {
  ca?: string | Buffer | (string | Buffer)[];
  cert?: string | Buffer | (string | Buffer)[];
  key?: string | Buffer | (string | Buffer)[];
  pfx?: string | Buffer | (string | Buffer)[];
  passphrase?: string;
  servername?: string;
  rejectUnauthorized?: boolean;
}

const TLS_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'servername', 'rejectUnauthorized'] as const;

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  return false;
}

export function sameTls(a: TlsOptions, b: TlsOptions): boolean {
  return TLS_KEYS.every((k) => sameValue(a[k], b[k]));
}

/** Only the TLS keys of `options` (an agent's options carry unrelated ones too), undefined ones dropped. */
export function pickTls(options: Record<string, unknown>): TlsOptions {
  const out: Record<string, unknown> = {};
  for (const k of TLS_KEYS) if (options[k] !== undefined && options[k] !== null) out[k] = options[k];
  return out as TlsOptions;
}

export class ConnectionPool {
  private current: { tls: TlsOptions; pool: Http1Pool } | undefined;

  /** @param origin scheme://host:port of the API server */
  constructor(private readonly origin: URL) {}

  /** The pool for these TLS options: the current one when they are unchanged, else a new one. */
  for(tls: TlsOptions): Http1Pool {
    const cur = this.current;
    if (cur && sameTls(cur.tls, tls)) return cur.pool;
    const pool = new Http1Pool({ url: this.origin, tls: { ...tls } });
    this.current = { tls, pool };
    cur?.pool.close();
    return pool;
  }

  /** Closes every connection at once, open watches included (on shutdown). */
  close(): void {
    const cur = this.current;
    this.current = undefined;
    cur?.pool.destroy();
  }
}
