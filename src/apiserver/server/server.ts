/**
 * The HTTPS front of the embedded API server: TLS (client certificates requested, checked by the
 * authenticator), the controllers that run inside the server, and the request pipeline
 * (pipeline.ts). Every failure becomes a Status; unexpected exceptions are logged as bugs and
 * answered with 500, never a crash or a hung request.
 */
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { KObject } from '../../api/meta.js';
import type { Auditor } from '../audit/auditor.js';
import { ApiError, toApiError } from '../http/errors.js';
import { ApiServerMetrics } from '../http/metrics.js';
import { writeError } from '../http/http-io.js';
import { ClusterRoleAggregation } from '../controllers/clusterrole-aggregation.js';
import { KubernetesServiceController } from '../controllers/kubernetes-service.js';
import { RootCaPublisher } from '../controllers/root-ca-publisher.js';
import { EventExpiry } from '../controllers/event-expiry.js';
import { NamespaceFinalizer } from '../controllers/namespace-finalizer.js';
import { DefaultServiceAccounts } from '../controllers/default-service-account.js';
import { realClock } from '../../lib/clock.js';
import { buildRegistries } from '../registry/registries.js';
import type { ServiceRange } from '../../lib/service-range.js';
import { admissionChain, DEFAULT_ON_PLUGINS, type AdmissionPluginName } from '../admission/chain.js';
import type { Admission } from '../registry/generic/admission.js';
import type { Strategy } from '../registry/generic/strategy.js';
import { servingTls, type ServingTlsOptions } from '../../pki/serving-cert-files.js';
import { Pipeline, type PipelineOptions } from './pipeline.js';

export interface ApiServerOptions extends PipelineOptions {
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
