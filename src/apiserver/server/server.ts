/**
 * The HTTPS front of the embedded API server: TLS (client certificates requested, checked by the
 * authenticator), health endpoints, authentication, authorization, discovery, and the resource
 * pipeline. Every failure becomes a Status; unexpected exceptions are logged as bugs and answered
 * with 500, never a crash or a hung request.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket, PeerCertificate, DetailedPeerCertificate } from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Registry } from 'prom-client';
import type { KObject, UserInfo } from '../../api/meta.js';
import type { Logger } from '../../log/logger.js';
import type { AuthenticationRequest, Authenticator } from '../authentication/types.js';
import type { Auditor } from '../audit/auditor.js';
import type { RequestAudit } from '../audit/request.js';
import { ApiError, errors, toApiError } from '../http/errors.js';
import { health, isHealthPath, type HealthCheck } from './health.js';
import { ApiServerMetrics, type RequestTracker } from '../http/metrics.js';
import type { RequestScope, UnknownFieldsHook } from '../handlers/scope.js';
import { writeBody, writeError } from '../http/http-io.js';
import { serveDiscovery } from '../discovery/index.js';
import { ClusterRoleAggregation } from '../controllers/clusterrole-aggregation.js';
import { KubernetesServiceController } from '../controllers/kubernetes-service.js';
import { RootCaPublisher } from '../controllers/root-ca-publisher.js';
import { EventExpiry } from '../controllers/event-expiry.js';
import { NamespaceFinalizer } from '../controllers/namespace-finalizer.js';
import { DefaultServiceAccounts } from '../controllers/default-service-account.js';
import { FLOW_CONTROL_DEFAULTS, FlowControl, type FlowControlOptions } from '../flowcontrol/flow-control.js';
import { realClock } from '../../lib/clock.js';
import { buildRegistries, type Registries } from '../registry/registries.js';
import type { ServiceRange } from '../../lib/service-range.js';
import { admissionChain, DEFAULT_ON_PLUGINS, type AdmissionPluginName } from '../admission/chain.js';
import type { Admission } from '../registry/generic/admission.js';
import type { GenericRegistry } from '../registry/generic/registry.js';
import type { RequestContext, Strategy } from '../registry/generic/strategy.js';
import type { Authorizer } from '../authorization/authorizer.js';
import { parseRequestInfo, requestPath, type RequestInfo } from '../http/request-info.js';
import { routeResource } from './routes.js';
import type { Store } from '../storage/store.js';
import { servingTls, type ServingTlsOptions } from '../../pki/serving-cert-files.js';

export interface ApiServerOptions {
  store: Store;
  logger: Logger;
  /**
   * The serving certificate (a fixed pair, or files re-read when they change), the CA of client
   * certificates, and Go's TLS version and suite names (--tls-min-version, --tls-cipher-suites).
   */
  tls: ServingTlsOptions;
  host?: string;
  /** 0 = any free port. */
  port?: number;
  authenticator: Authenticator;
  authorizer: Authorizer;
  /** Strategies added to (or replacing, by group and plural) the built-in ones: access control's RBAC, reviews, tokens. */
  extraStrategies?: Strategy[];
  /** Interval of watch BOOKMARK events (default 60 s). */
  bookmarkIntervalMs?: number;
  /** Bytes of events a watcher may fall behind by before it is closed so its client resumes (default 1 MiB). */
  watchBufferBytes?: number;
  /** Schema-based unknown-field detection for fieldValidation (hook for OpenAPI schemas). */
  unknownFields?: UnknownFieldsHook;
  /** Admission plugins enabled besides the default-on ones (kube-apiserver's --enable-admission-plugins). */
  admissionPlugins?: readonly AdmissionPluginName[];
  /** Objects created at start when absent (the RBAC default policy). */
  defaultObjects?: KObject[];
  /** Fixed documents served at non-resource paths after authorization (issuer discovery). */
  staticRoutes?: StaticRoute[];
  /** Where the server's metrics go; with one, GET /metrics serves it (to callers allowed `get` on /metrics). */
  metricsRegistry?: Registry;
  /** The bundle that verifies this server, published in every namespace as ConfigMap kube-root-ca.crt. */
  rootCaPem?: string;
  /** --event-ttl for a store without leases: Events are deleted this long after their last write. */
  eventTtlSeconds?: number;
  /** --service-cluster-ip-range (default 10.96.0.0/12): Services' cluster IPs, the first the kubernetes Service's. */
  serviceRange?: ServiceRange;
  /** --max-requests-inflight and friends; absent: upstream's defaults (400 + 200 seats, priority levels). */
  flowControl?: Omit<FlowControlOptions, 'registry'>;
  /** The audit policy and backends (--audit-policy-file); closed with the server, after the last request. */
  auditor?: Auditor;
  /** Checks /healthz and /readyz run besides the store's (kms-providers). */
  healthChecks?: HealthCheck[];
}

export interface StaticRoute {
  path: string;
  contentType: string;
  headers: Record<string, string>;
  body: string;
}

export interface RunningApiServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

const MAX_HEADER_BYTES = 1 << 20;

/**
 * Connections the kernel queues before the event loop accepts them. Node's default (511) overflowed
 * at 1,000 kubelets joining in 10 s (4,393 overflows, connect p99 5.1 s: issue 29); Go's listener,
 * kube-apiserver's, asks for net.core.somaxconn, 4096 on current kernels (which also caps this).
 */
const LISTEN_BACKLOG = 4096;

/**
 * A request the HTTP parser refused still gets an answer, worded as Go's net/http words it (431 for
 * headers past the limit, 400 otherwise), unless the peer is already gone.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
  socket.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${status}`);
}

/**
 * The peer chain of each TLS connection, read once: it cannot change on a connection (renegotiation
 * is disabled, as Go's TLS server never supports it), and the same array lets the x509
 * authenticator reuse its verification for every request of a keep-alive connection.
 */
const chains = new WeakMap<TLSSocket, Uint8Array[]>();

/** The DER certificates the client presented, leaf first. */
function clientChain(req: IncomingMessage): Uint8Array[] {
  const socket = req.socket as TLSSocket;
  if (typeof socket.getPeerCertificate !== 'function') return [];
  let chain = chains.get(socket);
  if (!chain) chains.set(socket, (chain = readChain(socket)));
  return chain;
}

function readChain(socket: TLSSocket): Uint8Array[] {
  const chain: Uint8Array[] = [];
  let cert: PeerCertificate | DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  const seen = new Set<PeerCertificate>();
  while (cert && cert.raw && !seen.has(cert)) {
    seen.add(cert);
    chain.push(new Uint8Array(cert.raw));
    const next: DetailedPeerCertificate | undefined = (cert as DetailedPeerCertificate).issuerCertificate;
    if (!next || next === cert || next.raw?.equals(cert.raw)) break;
    cert = next;
  }
  return chain;
}

class Pipeline {
  private readonly watches = new Set<() => void>();
  private readonly flowControl: FlowControl;
  constructor(
    private readonly opts: ApiServerOptions,
    private readonly registries: Registries,
    private readonly metrics: ApiServerMetrics | undefined,
  ) {
    this.flowControl = new FlowControl({ ...FLOW_CONTROL_DEFAULTS, ...opts.flowControl, registry: opts.metricsRegistry });
  }

  endWatches(): void {
    for (const stop of [...this.watches]) stop();
  }

  async handle(req: IncomingMessage, res: ServerResponse, tracker: RequestTracker | undefined, audit: RequestAudit | undefined): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://localhost');
    const info = parseRequestInfo(req.method ?? 'GET', requestPath(req.url), url.searchParams);
    tracker?.setInfo(info);
    // Health endpoints too are authenticated and authorized, as upstream's: anonymous probes are
    // system:anonymous there (system:public-info-viewer), and --anonymous-auth=false closes them.
    const user = await this.authenticate(req, info, audit);
    // Only an authenticated request to an installed resource may name it in the metrics' labels.
    const entry = info.isResourceRequest ? this.registries.find(info.apiGroup, info.apiVersion, info.resource) : undefined;
    if (entry) tracker?.routed(entry.info);
    const probe = isHealthPath(info.path);
    // Shed or queued before any further work: authorization and the handler run only with a seat.
    // Probes are exempt, as upstream's `probes` FlowSchema makes them.
    const admitted = probe ? undefined : this.flowControl.admit(user, info, res);
    if (admitted) await admitted;
    await this.authorize(user, info, url.searchParams.get('fieldSelector') ?? undefined, audit);
    if (probe) {
      const { status, body } = await health(info.path, this.opts.store, this.opts.healthChecks, url.searchParams.has('verbose'));
      writeBody(res, status, 'text/plain; charset=utf-8', body);
      return;
    }
    if (!info.isResourceRequest) return this.serveNonResource(req, res, info, url);
    if (!entry) throw errors.pathNotFound();
    return this.serveResource(req, res, { info, url, user, entry, audit });
  }

  private async serveResource(
    req: IncomingMessage,
    res: ServerResponse,
    target: { info: RequestInfo; url: URL; user: UserInfo; entry: GenericRegistry; audit: RequestAudit | undefined },
  ): Promise<void> {
    const { info, url, user, entry, audit } = target;
    const ctx: RequestContext = {
      user,
      now: new Date(),
      dryRun: false,
      authorizer: this.opts.authorizer,
      objects: this.registries.reader,
      warnings: [],
    };
    if (audit) ctx.auditAnnotation = (key, value) => audit.annotate(key, value);
    const scope: RequestScope = {
      req,
      res,
      info,
      query: url.searchParams,
      registry: entry,
      strategy: entry.strategy,
      ctx,
      logger: this.opts.logger,
      unknownFields: this.opts.unknownFields,
      bookmarkIntervalMs: this.opts.bookmarkIntervalMs ?? 60_000,
      watchBufferBytes: this.opts.watchBufferBytes,
      audit,
      trackWatch: (stop) => {
        this.watches.add(stop);
        const ended = this.metrics?.watchStarted(entry.info);
        return (slow) => {
          if (this.watches.delete(stop)) ended?.(slow);
        };
      },
    };
    await routeResource(scope);
  }

  /** Metrics, issuer discovery and the other static routes, then API discovery; 404 for anything else. */
  private async serveNonResource(req: IncomingMessage, res: ServerResponse, info: RequestInfo, url: URL): Promise<void> {
    if (info.path === '/metrics' && this.metrics && req.method === 'GET') {
      writeBody(res, 200, this.metrics.registry.contentType, await this.metrics.registry.metrics());
      return;
    }
    const route = this.opts.staticRoutes?.find((r) => r.path === info.path);
    if (route && (req.method === 'GET' || req.method === 'HEAD')) {
      for (const [k, v] of Object.entries(route.headers)) res.setHeader(k, v);
      writeBody(res, 200, route.contentType, route.body);
      return;
    }
    const found = serveDiscovery({
      path: `${info.path}${url.search}`,
      accept: req.headers.accept ?? '',
      ifNoneMatch: req.headers['if-none-match'],
      host: req.headers.host,
    });
    if (!found) throw errors.pathNotFound();
    res.statusCode = found.status;
    for (const [k, v] of Object.entries(found.headers)) res.setHeader(k, v);
    res.end(found.body);
  }

  private async authenticate(req: IncomingMessage, info: RequestInfo, audit: RequestAudit | undefined): Promise<UserInfo> {
    let user: UserInfo | undefined;
    const request: AuthenticationRequest = { headers: req.headers, headersDistinct: req.headersDistinct, path: info.path, clientCertificateChain: clientChain(req) };
    try {
      user = await this.opts.authenticator.authenticate(request);
    } catch (err) {
      this.metrics?.authenticated(undefined, true);
      // A refused impersonation is the caller's request, audited as such; bad credentials have no caller.
      if (request.impersonator) await audit?.authenticated(info, request.impersonator);
      else await audit?.authenticationFailed(info, request.clientCertificateChain.length > 0);
      throw err;
    }
    this.metrics?.authenticated(user?.username, false);
    if (!user) {
      await audit?.authenticationFailed(info, request.clientCertificateChain.length > 0);
      throw errors.unauthorized();
    }
    const caller = request.impersonator ?? user;
    if (audit && !(await audit.authenticated(info, caller, request.impersonator && user))) throw errors.internal(new Error('failed to store audit event'));
    return user;
  }

  private async authorize(user: UserInfo, info: RequestInfo, fieldSelector: string | undefined, audit: RequestAudit | undefined): Promise<void> {
    const attrs = info.isResourceRequest
      ? {
          user,
          verb: info.verb,
          apiGroup: info.apiGroup,
          resource: info.resource,
          subresource: info.subresource,
          namespace: info.namespace,
          name: info.name,
          fieldSelector,
        }
      : { user, verb: info.verb, path: info.path };
    const decision = await this.opts.authorizer.authorize(attrs);
    this.metrics?.authorized(decision.allowed);
    audit?.authorized(decision.allowed, decision.reason);
    if (decision.allowed) return;
    if (!info.isResourceRequest) throw errors.forbiddenPath(user.username, info.verb, info.path);
    throw errors.forbidden(
      { group: info.apiGroup, resource: info.resource, name: info.name, subresource: info.subresource, namespace: info.namespace },
      user.username,
      info.verb,
      decision.reason,
    );
  }
}

/** The default-on admission plugins and the ones the options enable, in upstream's order. */
const admission = (opts: ApiServerOptions): Admission => admissionChain([...DEFAULT_ON_PLUGINS, ...(opts.admissionPlugins ?? [])]);

export async function startApiServer(opts: ApiServerOptions): Promise<RunningApiServer> {
  const logger = opts.logger;
  const registries = buildRegistries(opts.store, opts.extraStrategies ?? [], admission(opts), opts.serviceRange);
  registries.observe(new NamespaceFinalizer(opts.store, registries), new DefaultServiceAccounts(registries));
  await registries.start(opts.defaultObjects ?? []);
  const clusterRoles = registries.find('rbac.authorization.k8s.io', 'v1', 'clusterroles');
  const aggregation = clusterRoles && new ClusterRoleAggregation({ store: opts.store, clusterRoles, context: registries.systemContext, logger });
  await aggregation?.start();
  const configMaps = registries.find('', 'v1', 'configmaps');
  const caPem = opts.rootCaPem;
  const rootCa = caPem !== undefined && configMaps ? new RootCaPublisher({ store: opts.store, configMaps, context: registries.systemContext, logger, caPem }) : undefined;
  await rootCa?.start();
  const ttl = opts.eventTtlSeconds;
  const eventExpiry = ttl === undefined ? undefined : new EventExpiry({ store: opts.store, ttlMs: ttl * 1000, clock: realClock, logger });
  eventExpiry?.start();
  const metrics = opts.metricsRegistry && new ApiServerMetrics({ registry: opts.metricsRegistry, store: opts.store, resources: () => registries.storedResources() });
  const pipeline = new Pipeline(opts, registries, metrics);
  const tls = servingTls(opts.tls);
  const server: Server = createServer(
    {
      ...tls.contextOptions(),
      requestCert: true,
      rejectUnauthorized: false,
      // kube-apiserver's: idle keep-alive connections stay 90 s (Go's http.DefaultTransport keeps them
      // as long), request headers must arrive within 32 s. With Node's 5 s idle default, clients paid a
      // new TLS handshake after any pause longer than 5 s.
      keepAliveTimeout: 90_000,
      headersTimeout: 32_000,
      // kube-apiserver's MaxHeaderBytes (1 MiB): Node's 16 KiB default refused long bearer tokens.
      maxHeaderSize: MAX_HEADER_BYTES,
    },
    (req, res) => {
      const answer = (err: unknown): ApiError => {
        const apiErr = toApiError(err);
        if (apiErr.code === 500 && !(err instanceof ApiError)) logger.error({ err, method: req.method, url: req.url }, 'bug: unexpected error serving request');
        if (apiErr.code === 413) res.setHeader('Connection', 'close');
        if (res.headersSent) res.end();
        else writeError(res, apiErr);
        return apiErr;
      };
      const audit = opts.auditor?.begin(req, res);
      const handled = pipeline.handle(req, res, metrics?.startRequest(req, res), audit);
      if (!audit) {
        handled.catch(answer);
        return;
      }
      handled
        .then(
          () => audit.completed(res.statusCode),
          (err: unknown) => {
            const apiErr = answer(err);
            return err instanceof ApiError || apiErr.code !== 500 ? audit.failed(apiErr) : audit.panicked(err);
          },
        )
        .catch((err: unknown) => logger.error({ err }, 'bug: audit of a request failed'));
    },
  );
  server.on('secureConnection', (socket: TLSSocket) => socket.disableRenegotiation());
  tls.attach(server, (err) => logger.error({ err }, 'serving certificate files changed but cannot be used: the previous pair keeps serving'));
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    logger.debug({ err }, 'client connection error');
    answerClientError(err, socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: opts.port ?? 0, host: opts.host ?? '127.0.0.1', backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host ?? '127.0.0.1';
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const services = registries.find('', 'v1', 'services');
  const kubernetesService = services && new KubernetesServiceController({ services, context: registries.systemContext, logger, port, serviceRange: opts.serviceRange });
  await kubernetesService?.start();
  logger.info({ url }, 'api server listening');
  return {
    url,
    port,
    async close() {
      registries.close();
      tls.stop();
      pipeline.endWatches();
      aggregation?.stop();
      kubernetesService?.stop();
      // Their writes under way finish before close resolves: the caller closes the store next.
      const background = Promise.all([rootCa?.stop(), eventExpiry?.stop()]);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 1000).unref();
      });
      await background;
      await opts.auditor?.close();
    },
  };
}
