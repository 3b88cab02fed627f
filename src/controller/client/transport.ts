/**
 * The controller's one HTTP transport: HTTP/1.1 keep-alive connection pools of its own (http1.ts),
 * with client-node's KubeConfig still the only source of credentials and TLS settings, so token files, exec plugins, client certificates and insecure-skip-tls-verify behave
 * exactly as they do for client-node. KubeConfig is asked again at most once a second (it caches
 * tokens itself and re-reads certificate files, which is how a rotation is seen: within a second,
 * where client-go's certificate reload takes minutes); the connection pool is reused while the TLS
 * options it yields are unchanged.
 */
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { sleep, type Clock } from '../../lib/clock.js';
import type { BodySink, Reply } from './http1.js';
import { ConnectionPool, pickTls, type TlsOptions } from './connection-pool.js';

export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface TransportRequest {
  method: Method;
  /** Absolute path and query on the origin (`basePath` + API path when the server URL has a path). */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** Longest pause between body chunks before the request fails (ms; 0 = none, for watches). */
  bodyTimeoutMs?: number;
}

interface Credentials {
  headers: Record<string, string>;
  tls: TlsOptions;
}

/** How long one answer from KubeConfig is reused (it builds an https.Agent and decodes PEMs per call). */
const CREDENTIALS_TTL_MS = 1000;

/** client-go's maxRetries: a request told to come back later is sent again at most this many times. */
export const MAX_RETRIES = 10;

/**
 * How long the server asked us to wait before sending the request again (client-go's checkWait): a
 * 429, or a 500-504, with a Retry-After of whole seconds; undefined when it did not ask.
 */
export function retryAfterMs(statusCode: number, headers: Record<string, string | string[] | undefined>): number | undefined {
  if (statusCode !== 429 && (statusCode < 500 || statusCode > 504)) return undefined;
  const value = headers['retry-after'];
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || !/^\d+$/.test(text.trim())) return undefined;
  return Number(text.trim()) * 1000;
}

export class Transport {
  /** scheme://host:port */
  readonly origin: string;
  /** The server URL's own path ('' or e.g. '/k8s/clusters/c-1'), which prefixes every API path. */
  readonly basePath: string;
  private readonly pools: ConnectionPool;
  private cached: { creds: Credentials; at: number } | undefined;

  /** @param clock the credentials cache's time and the waits a Retry-After asks for */
  constructor(
    private readonly kubeConfig: KubeConfig,
    server: string,
    private readonly clock: Clock,
  ) {
    const url = new URL(server);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.pools = new ConnectionPool(url);
  }

  /**
   * Sends one request with the kubeconfig's credentials and reads its reply in full. A reply asking
   * to retry later (429 and Retry-After: an overloaded server shedding load) is honoured as
   * client-go does: the same request again after the wait, up to MAX_RETRIES times.
   */
  fetch(req: TransportRequest): Promise<Reply> {
    return this.withRetries(req, undefined);
  }

  /**
   * Like `fetch`, but a 2xx reply resolves once its headers arrived and its body streams into
   * `sink` (a watch); the reply's `stop` ends it.
   */
  stream(req: TransportRequest, sink: BodySink): Promise<Reply> {
    return this.withRetries(req, sink);
  }

  private async withRetries(req: TransportRequest, sink: BodySink | undefined): Promise<Reply> {
    for (let retries = 0; ; retries++) {
      const creds = this.cached !== undefined && this.fresh(this.cached.at) ? this.cached.creds : await this.credentials();
      const headers = req.headers ? { ...req.headers, ...creds.headers } : creds.headers;
      const opts = { method: req.method, path: req.path, headers, body: req.body, bodyTimeoutMs: req.bodyTimeoutMs };
      const res = await this.pools.for(creds.tls).request(opts, req.signal, sink);
      const wait = retries < MAX_RETRIES ? retryAfterMs(res.statusCode, res.headers) : undefined;
      if (wait === undefined || req.signal?.aborted) return res;
      await sleep(this.clock, wait, req.signal);
    }
  }

  /** Closes every pooled connection (open watches included). */
  close(): void {
    this.pools.close();
  }

  /** Path and query of a full URL on this server (what client-node's typed APIs produce). */
  pathOf(url: string): string {
    const u = new URL(url);
    if (u.origin !== this.origin) throw new Error(`request to ${u.origin} outside the configured server ${this.origin}`);
    return u.pathname + u.search;
  }

  /** Whether credentials read at `at` may still be used (read synchronously on the hot path, without an await). */
  private fresh(at: number): boolean {
    const now = this.clock.now();
    return now - at < CREDENTIALS_TTL_MS && now >= at;
  }

  private async credentials(): Promise<Credentials> {
    const now = this.clock.now();
    const creds = await this.fromKubeConfig();
    this.cached = { creds, at: now };
    return creds;
  }

  private async fromKubeConfig(): Promise<Credentials> {
    if (this.kubeConfig.getCurrentCluster()?.proxyUrl) throw new Error('kubeconfig proxy-url is not supported by the controller transport');
    // Request options KubeConfig fills in (auth headers, basic auth, TLS material), read back rather than sent.
    const opts: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(opts);
    const headers: Record<string, string> = {};
    // A username/password user: client-node sends Basic, and a token (header below) wins over it, as before.
    if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) headers[k] = String(v);
    return { headers, tls: pickTls(opts as Record<string, unknown>) };
  }
}
