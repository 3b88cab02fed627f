/**
 * The HTTPS front of the embedded API server: TLS (client certificates requested, checked by the
 * authenticator), the controllers that run inside the server, and the request pipeline
 * (pipeline.ts). Every failure becomes a Status; unexpected exceptions are logged as bugs and
 * answered with 500, never a crash or a hung request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import os from 'node:os';
import type { KObject } from '../../api/meta.js';
import type { Auditor } from '../audit/auditor.js';
import { ApiError, toApiError } from '../http/errors.js';
import { ApiServerMetrics } from '../http/metrics.js';
import { StorageMetrics } from '../http/storage-metrics.js';
import { writeError } from '../http/http-io.js';
import { isHttp2 } from '../http/connection.js';
import { ClusterRoleAggregation } from '../controllers/clusterrole-aggregation.js';
import { KubernetesServiceController } from '../controllers/kubernetes-service.js';
import { ApiserverIdentity, CONTROL_PLANE_TIMING, joinHostPort, type ControlPlaneTiming } from '../controllers/apiserver-identity.js';
import { RootCaPublisher } from '../controllers/root-ca-publisher.js';
import { EventExpiry } from '../controllers/event-expiry.js';
import { NamespaceFinalizer } from '../controllers/namespace-finalizer.js';
import { DefaultServiceAccounts } from '../controllers/default-service-account.js';
import { realClock } from '../../lib/clock.js';
import { promised } from '../../lib/maybe-promise.js';
import { buildRegistries, type Registries } from '../registry/registries.js';
import type { ServiceRange } from '../../lib/service-range.js';
import { admissionChain, DEFAULT_ON_PLUGINS, type AdmissionPluginName } from '../admission/chain.js';
import type { Admission } from '../registry/generic/admission.js';
import type { Strategy } from '../registry/generic/strategy.js';
import { servingTls, type ServingTlsOptions } from '../../pki/serving-cert-files.js';
import { Pipeline, type PipelineOptions } from './pipeline.js';
import type { CloseOptions } from './connection-serving.js';
import { createSecureServer, type SecureServingOptions } from './secure-server.js';

export interface ApiServerOptions extends PipelineOptions, SecureServingOptions {
  /**
   * The serving certificate (a fixed pair, or files re-read when they change), the CA of client
   * certificates, and Go's TLS version and suite names (--tls-min-version, --tls-cipher-suites).
   */
  tls: ServingTlsOptions;
  host?: string;
  /** 0 = any free port. */
  port?: number;
  /** Strategies added to (or replacing, by group and plural) the built-in ones: access control's RBAC, reviews, tokens. */
  extraStrategies?: Strategy[];
  /** Admission plugins enabled besides the default-on ones (kube-apiserver's --enable-admission-plugins). */
  admissionPlugins?: readonly AdmissionPluginName[];
  /** Objects created at start when absent (the RBAC default policy). */
  defaultObjects?: KObject[];
  /** The bundle that verifies this server, published in every namespace as ConfigMap kube-root-ca.crt. */
  rootCaPem?: string;
  /** --event-ttl for a store without leases: Events are deleted this long after their last write. */
  eventTtlSeconds?: number;
  /** --service-cluster-ip-range (default 10.96.0.0/12): Services' cluster IPs, the first the kubernetes Service's. */
  serviceRange?: ServiceRange;
  /** The audit policy and backends (--audit-policy-file); closed with the server, after the last request. */
  auditor?: Auditor;
  /** --etcd-count-metric-poll-period (default 1m; 0: apiserver_storage_objects is not collected). */
  countMetricPollPeriodMs?: number;
  /** --etcd-db-metric-poll-interval (default 30s; 0: apiserver_storage_db_total_size_in_bytes is not collected). */
  dbMetricPollIntervalMs?: number;
  /** The identity Lease's and the kubernetes Service's periods (default upstream's); tests shorten them. */
  controlPlaneTiming?: ControlPlaneTiming;
}

export interface RunningApiServer {
  url: string;
  port: number;
  /** Settles (never rejects) once the server can no longer accept connections (a TLS front thread ended): stop it. */
  broken: Promise<Error>;
  /** Refuses new connections from now on (a shutdown's first step); the open ones are served until close(). */
  stopAccepting(): void;
  /** Stops serving, then the server's own work and the audit backends (flushed); see ConnectionServing.close for `exiting`. */
  close(opts?: CloseOptions): Promise<void>;
}

/**
 * Connections the kernel queues before the event loop accepts them. Node's default (511) overflowed
 * at 1,000 kubelets joining in 10 s (4,393 overflows, connect p99 5.1 s: issue 29); Go's listener,
 * kube-apiserver's, asks for net.core.somaxconn, 4096 on current kernels (which also caps this).
 */
const LISTEN_BACKLOG = 4096;

const listenHost = (opts: ApiServerOptions): string => opts.host ?? '127.0.0.1';

/** The default-on admission plugins and the ones the options enable, in upstream's order. */
const admission = (opts: ApiServerOptions): Admission => admissionChain([...DEFAULT_ON_PLUGINS, ...(opts.admissionPlugins ?? [])]);

/** The request metrics and the polled storage metrics, when the server has a registry. */
function serverMetrics(opts: ApiServerOptions, registries: Registries): { metrics?: ApiServerMetrics; storageMetrics?: StorageMetrics } {
  const registry = opts.metricsRegistry;
  if (!registry) return {};
  const storageMetrics = new StorageMetrics({
    registry,
    store: opts.store,
    resources: () => registries.storedResources(),
    logger: opts.logger,
    countPollPeriodMs: opts.countMetricPollPeriodMs,
    dbPollIntervalMs: opts.dbMetricPollIntervalMs,
  });
  return { metrics: new ApiServerMetrics({ registry }), storageMetrics };
}

/**
 * This replica's identity Lease, then the kubernetes Service, which reads the live replicas from
 * the identity Leases (a bare server without Leases or Services runs what it has).
 */
async function startControlPlane(opts: ApiServerOptions, registries: Registries, host: string, port: number): Promise<{ stop(): void }> {
  const { logger } = opts;
  const timing = opts.controlPlaneTiming ?? CONTROL_PLANE_TIMING;
  const leases = registries.find('coordination.k8s.io', 'v1', 'leases');
  const address = joinHostPort(host, port);
  const identity = leases && new ApiserverIdentity({ leases, context: registries.systemContext, logger, hostname: os.hostname(), address, timing });
  await identity?.start();
  const services = registries.find('', 'v1', 'services');
  const livePorts = identity && ((): Promise<Set<number>> => identity.livePorts());
  const service =
    services && new KubernetesServiceController({ services, context: registries.systemContext, logger, port, livePorts, intervalMs: timing.intervalMs, serviceRange: opts.serviceRange });
  await service?.start();
  return {
    stop() {
      service?.stop();
      identity?.stop();
    },
  };
}

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
  const { metrics, storageMetrics } = serverMetrics(opts, registries);
  const pipeline = new Pipeline(opts, registries, metrics);
  const tls = servingTls(opts.tls);
  // Not an async function: a request the pipeline answers without waiting adds no await here either.
  const serve = (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const answer = (err: unknown): ApiError => {
      const apiErr = toApiError(err);
      if (apiErr.code === 500 && !(err instanceof ApiError)) logger.error({ err, method: req.method, url: req.url }, 'bug: unexpected error serving request');
      // HTTP/1.1 closes the connection rather than read the rest of a body too large; HTTP/2 resets
      // only the stream (secure-server.ts).
      if (apiErr.code === 413 && !isHttp2(req)) res.setHeader('Connection', 'close');
      if (res.headersSent) res.end();
      else writeError(res, apiErr);
      return apiErr;
    };
    const audit = opts.auditor?.begin(req, res);
    const auditFailed = (err: unknown): void => logger.error({ err }, 'bug: audit of a request failed');
    const completed = (): Promise<void> | undefined => audit?.completed(res.statusCode).catch(auditFailed);
    const failed = (err: unknown): Promise<void> | undefined => {
      const apiErr = answer(err);
      return audit && (err instanceof ApiError || apiErr.code !== 500 ? audit.failed(apiErr) : audit.panicked(err)).catch(auditFailed);
    };
    let work: Promise<void>;
    try {
      work = pipeline.handle(req, res, metrics?.startRequest(req, res), audit);
    } catch (err) {
      return promised(() => failed(err));
    }
    return work.then(completed, failed);
  };
  const secure = createSecureServer(tls.contextOptions(), opts, logger, serve);
  tls.attach(secure, (err) => logger.error({ err }, 'serving certificate files changed but cannot be used: the previous pair keeps serving'));
  const host = listenHost(opts);
  const port = await secure.listen(host, opts.port ?? 0, LISTEN_BACKLOG);
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const controlPlane = await startControlPlane(opts, registries, host, port);
  storageMetrics?.start();
  logger.info({ url }, 'api server listening');
  return {
    url,
    port,
    broken: secure.broken,
    stopAccepting: () => secure.stopAccepting?.(),
    async close(closeOpts) {
      storageMetrics?.stop();
      registries.close();
      tls.stop();
      pipeline.close();
      aggregation?.stop();
      controlPlane.stop();
      // Their writes under way finish before close resolves: the caller closes the store next.
      const background = Promise.all([rootCa?.stop(), eventExpiry?.stop()]);
      await secure.close(closeOpts);
      await background;
      await opts.auditor?.close();
    },
  };
}
