/**
 * The one place every controller API call goes through, on one Transport: typed client-node
 * APIs (through an HttpLibrary adapter), raw JSON requests (the hot path: no ObjectSerializer) and
 * watch streams, all measured by rest_client_* metrics.
 */
import { createConfiguration, ServerConfiguration, wrapHttpLibrary, type HttpLibrary, type KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../../lib/clock.js';
import type { RestClientMetrics } from '../../metrics/rest-client.js';
import type { BodySink, Reply } from './http1.js';
import { sendContext } from './http-library.js';
import { Transport, type Method } from './transport.js';

/** A non-2xx reply to a raw request; `code` matches client-node's ApiException so errors.ts treats both alike. */
export class HttpStatusError extends Error {
  override readonly name = 'HttpStatusError';
  constructor(
    readonly code: number,
    readonly body: unknown,
  ) {
    super(statusMessage(code, body));
  }
}

function statusMessage(code: number, body: unknown): string {
  const msg = (body as { message?: unknown } | undefined)?.message;
  return typeof msg === 'string' ? msg : `HTTP ${code}`;
}

/** A reply body as JSON when it parses (a Status, an object), else its text (a proxy's error page). */
function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The HttpStatusError to throw for a non-2xx reply (read in full). */
export function statusError(res: Reply): HttpStatusError {
  return new HttpStatusError(res.statusCode, parseBody(res.body.toString('utf8')));
}

type ApiConstructor<T> = new (config: ReturnType<typeof createConfiguration>) => T;

export type Query = Record<string, string | undefined>;

/** Plain requests fail after this long without response bytes; watches have no limit. */
const BODY_TIMEOUT_MS = 300_000;
export interface KubeClientOptions {
  kubeConfig: KubeConfig;
  clock: Clock;
  metrics?: RestClientMetrics;
  /** Sent with every request (client-go's form: src/lib/user-agent.ts); none when absent. */
  userAgent?: string;
}

export class KubeClient {
  readonly kubeConfig: KubeConfig;
  readonly server: string;
  private readonly transport: Transport;
  private readonly http: HttpLibrary;
  private readonly host: string;
  private readonly headers: Record<string, string>;
  private readonly bodyHeaders: Record<string, string>;

  /** @param shared the transport of the client this one is a view of (forComponent) */
  constructor(
    private readonly opts: KubeClientOptions,
    shared?: Transport,
  ) {
    this.kubeConfig = opts.kubeConfig;
    const cluster = opts.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.server = cluster.server.replace(/\/+$/, '');
    this.host = new URL(this.server).host;
    this.transport = shared ?? new Transport(opts.kubeConfig, this.server, opts.clock);
    const agent: Record<string, string> = opts.userAgent ? { 'user-agent': opts.userAgent } : {};
    this.headers = { accept: 'application/json', ...agent };
    this.bodyHeaders = { ...this.headers, 'content-type': 'application/json' };
    this.http = wrapHttpLibrary({ send: (ctx) => this.observe(ctx.getHttpMethod(), () => sendContext(this.transport, ctx, agent)) });
  }

  /**
   * The same client for one component (a controller, the informers): its requests carry
   * `<user agent>/<name>`, as client-go's AddUserAgent gives each of kube-controller-manager's
   * controllers, over this client's connections. Closing this client closes them.
   */
  forComponent(name: string): KubeClient {
    return new KubeClient({ ...this.opts, userAgent: this.opts.userAgent && `${this.opts.userAgent}/${name}` }, this.transport);
  }

  /** Closes pooled keep-alive connections and open watches (on shutdown). */
  close(): void {
    this.transport.close();
  }

  /** A typed client-node API (CoordinationV1Api, CertificatesV1Api, ...) whose requests are measured. */
  api<T>(ctor: ApiConstructor<T>): T {
    // No authMethods: the transport applies the kubeconfig's credentials to every request itself.
    return new ctor(createConfiguration({ baseServer: new ServerConfiguration(this.server, {}), authMethods: {}, httpApi: this.http }));
  }

  /**
   * A JSON request to an API path (`body` is sent as JSON); resolves to the parsed reply, rejects
   * with HttpStatusError on a non-2xx reply.
   */
  async requestJSON<T>(method: Method, path: string, query: Query = {}, signal?: AbortSignal, body?: unknown): Promise<T> {
    const res = await this.send(method, path, query, signal, body);
    return parseBody(res.body.toString('utf8')) as T;
  }

  /**
   * Like requestJSON, but resolves to the reply's text, unparsed: for replies that are kept but
   * rarely read (an Event written, needed again only if it repeats).
   */
  async requestText(method: Method, path: string, body?: unknown): Promise<string> {
    const res = await this.send(method, path, {}, undefined, body);
    return res.body.toString('utf8');
  }

  /**
   * A JSON write whose reply is not needed (a PUT of a whole CSR answers with the whole CSR): the
   * reply body is discarded unparsed. Rejects with HttpStatusError on a non-2xx reply.
   */
  async write(method: Method, path: string, body: unknown): Promise<void> {
    await this.send(method, path, {}, undefined, body);
  }

  /**
   * Opens a streaming GET (a watch): a 2xx reply resolves once its headers arrived, its body going
   * to `sink` as it streams; any other reply is read in full. The caller records the request (see
   * `record`).
   */
  stream(path: string, query: Query, sink: BodySink): Promise<Reply> {
    return this.transport.stream({ method: 'GET', path: this.pathWithQuery(path, query), headers: this.headers, bodyTimeoutMs: 0 }, sink);
  }

  /** Records one request's outcome and latency; `startedAt` is a clock time (watches report here too). */
  record(method: string, code: number | '<error>', startedAt: number): void {
    this.opts.metrics?.observe(method, this.host, code, (this.opts.clock.now() - startedAt) / 1000);
  }

  now(): number {
    return this.opts.clock.now();
  }

  private async send(method: Method, path: string, query: Query, signal: AbortSignal | undefined, body: unknown): Promise<Reply> {
    const res = await this.observe(method, () =>
      this.transport.fetch({
        method,
        path: this.pathWithQuery(path, query),
        headers: body === undefined ? this.headers : this.bodyHeaders,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
        bodyTimeoutMs: BODY_TIMEOUT_MS,
      }),
    );
    if (res.statusCode < 200 || res.statusCode > 299) throw statusError(res);
    return res;
  }

  private pathWithQuery(path: string, query: Query): string {
    let qs = '';
    for (const k in query) {
      const v = query[k];
      if (v === undefined || v === '') continue;
      qs += `${qs ? '&' : '?'}${encodeURIComponent(k)}=${encodeURIComponent(v)}`;
    }
    return this.transport.basePath + path + qs;
  }

  private async observe<T extends { statusCode: number } | { httpStatusCode: number }>(method: string, send: () => Promise<T>): Promise<T> {
    const started = this.opts.clock.now();
    try {
      const res = await send();
      this.record(method, 'statusCode' in res ? res.statusCode : res.httpStatusCode, started);
      return res;
    } catch (err) {
      this.record(method, '<error>', started);
      throw err;
    }
  }
}
