/**
 * The one place every controller API call goes through. Typed client-node APIs and raw JSON requests
 * share an instrumented HttpLibrary, so rest_client_* metrics see every request; watches (which
 * client-node's Watch opens with its own fetch) are counted by the list-watch adapter.
 */
import {
  createConfiguration,
  HttpMethod,
  IsomorphicFetchHttpLibrary,
  ServerConfiguration,
  wrapHttpLibrary,
  type HttpLibrary,
  type KubeConfig,
} from '@kubernetes/client-node';
import type { Clock } from '../../lib/clock.js';
import type { RestClientMetrics } from '../../metrics/rest-client.js';
import { AgentPool } from './agent-pool.js';

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

type ApiConstructor<T> = new (config: ReturnType<typeof createConfiguration>) => T;

export interface KubeClientOptions {
  kubeConfig: KubeConfig;
  clock: Clock;
  metrics?: RestClientMetrics;
}

export class KubeClient {
  readonly kubeConfig: KubeConfig;
  readonly server: string;
  private readonly http: HttpLibrary;
  private readonly agents = new AgentPool();

  constructor(private readonly opts: KubeClientOptions) {
    this.kubeConfig = opts.kubeConfig;
    const cluster = opts.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.server = cluster.server.replace(/\/+$/, '');
    const inner = new IsomorphicFetchHttpLibrary();
    this.http = wrapHttpLibrary({
      send: (ctx) => {
        const agent = this.agents.reuse(ctx.getAgent());
        if (agent) ctx.setAgent(agent);
        return this.observe(ctx.getHttpMethod(), () => inner.send(ctx).toPromise());
      },
    });
  }

  /** Closes pooled keep-alive connections (idle ones would otherwise wait for the server to close them). */
  close(): void {
    this.agents.destroy();
  }

  /** A typed client-node API (CoordinationV1Api, CertificatesV1Api, ...) whose requests are measured. */
  api<T>(ctor: ApiConstructor<T>): T {
    return new ctor(
      createConfiguration({
        baseServer: new ServerConfiguration(this.server, {}),
        authMethods: { default: this.kubeConfig },
        httpApi: this.http,
      }),
    );
  }

  /** A JSON request to an API path; rejects with HttpStatusError on a non-2xx reply. */
  async requestJSON<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, query: Record<string, string | undefined> = {}, signal?: AbortSignal): Promise<T> {
    const ctx = new ServerConfiguration(this.server, {}).makeRequestContext(path, method as HttpMethod);
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') ctx.setQueryParam(k, v);
    ctx.setHeaderParam('Accept', 'application/json');
    if (signal) ctx.setSignal(signal);
    await this.kubeConfig.applySecurityAuthentication(ctx);
    const res = await this.http.send(ctx).toPromise();
    const text = await res.body.text();
    const body: unknown = text ? JSON.parse(text) : undefined;
    if (res.httpStatusCode < 200 || res.httpStatusCode > 299) throw new HttpStatusError(res.httpStatusCode, body);
    return body as T;
  }

  /** Records one request's outcome and latency; `startedAt` is a clock time (watches report here too). */
  record(method: string, code: number | '<error>', startedAt: number): void {
    this.opts.metrics?.observe(method, new URL(this.server).host, code, (this.opts.clock.now() - startedAt) / 1000);
  }

  now(): number {
    return this.opts.clock.now();
  }

  private async observe<T extends { httpStatusCode: number }>(method: string, send: () => Promise<T>): Promise<T> {
    const started = this.opts.clock.now();
    try {
      const res = await send();
      this.record(method, res.httpStatusCode, started);
      return res;
    } catch (err) {
      this.record(method, '<error>', started);
      throw err;
    }
  }
}
