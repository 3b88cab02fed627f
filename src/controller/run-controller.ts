/**
 * The entry src/cmd calls for `kube-identity controller`: builds the measured client, the manager
 * (with leader election when configured) and the probe server, lets `register` add the controllers,
 * and runs until `signal` aborts. Resolves after a clean shutdown; rejects when leadership is lost or
 * the probe address cannot be bound (the caller exits non-zero).
 */
import { leaderGauge } from '../metrics/leader.js';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { ControllerConfig } from '../config/schema.js';
import { realClock, type Clock } from '../lib/clock.js';
import type { Logger } from '../log/logger.js';
import path from 'node:path';
import { tlsSettings } from '../config/tls.js';
import { startProbeServer, type ProbeServer, type ProbeServerOptions } from '../metrics/http.js';
import { servingTls } from '../pki/serving-cert-files.js';
import { selfSignedServingPair } from '../pki/self-signed.js';
import { MetricsAuth } from './metrics-auth.js';
import { registerProcessMetrics } from '../metrics/registry.js';
import { RestClientMetrics } from '../metrics/rest-client.js';
import { KubeClient } from './client/kube-client.js';
import { defaultIdentity } from './runtime/leader-election.js';
import { Manager } from './runtime/manager.js';

export interface ControllerDeps {
  logger: Logger;
  registry: Registry;
  kubeConfig: KubeConfig;
  signal: AbortSignal;
  /** Used for the default leader identity (the pod name). */
  hostname: string;
  /** Every request's User-Agent, each component's name added (client-go's form, src/lib/user-agent.ts). */
  userAgent?: string;
  /** Adds informers, controllers and runnables to the manager; `signal` stops any wait for the API server. */
  register?: (mgr: Manager, client: KubeClient, config: ControllerConfig, signal: AbortSignal) => unknown;
  clock?: Clock;
  /** Called once the probe server listens (tests read the bound URL). */
  onListening?: (server: ProbeServer) => void;
}

/** controller-runtime's secure metrics: the serving pair (given or self-signed) and the cluster's access reviews. */
async function secureMetrics(config: ControllerConfig, client: KubeClient, deps: ControllerDeps, clock: Clock): Promise<ProbeServerOptions['secure']> {
  const settings = tlsSettings(config);
  const tls = config.metricsCertPath
    ? servingTls({ ...settings, certFile: path.join(config.metricsCertPath, config.metricsCertName), keyFile: path.join(config.metricsCertPath, config.metricsCertKey) })
    : servingTls({ ...settings, ...(await selfSignedServingPair('kube-identity-controller-metrics', ['localhost', '127.0.0.1', deps.hostname])) });
  const auth = new MetricsAuth({ client: client.forComponent('metrics-auth'), clock, logger: deps.logger });
  return { tls, authorize: (req, urlPath) => auth.check(req.headers, urlPath) };
}

export async function runController(config: ControllerConfig, deps: ControllerDeps): Promise<void> {
  const clock = deps.clock ?? realClock;
  registerProcessMetrics(deps.registry);
  const metrics = RestClientMetrics.for(deps.registry);
  const client = new KubeClient({ kubeConfig: deps.kubeConfig, clock, metrics, userAgent: deps.userAgent });
  // As kube-controller-manager's: leader election on connections of its own, named as upstream's.
  const electionClient = config.leaderElect
    ? new KubeClient({ kubeConfig: deps.kubeConfig, clock, metrics, userAgent: deps.userAgent && `${deps.userAgent}/leader-election` })
    : undefined;
  const mgr = new Manager({
    client: client.forComponent('shared-informers'),
    leaderElectionClient: electionClient,
    logger: deps.logger,
    registry: deps.registry,
    clock,
    gracefulShutdownMs: config.gracefulShutdownTimeout,
    informerDefaults: { resyncPeriodMs: config.resyncPeriod },
    leaderElection: config.leaderElect
      ? {
          namespace: config.leaderElectionNamespace,
          name: config.leaderElectionId,
          identity: config.leaderElectionIdentity || defaultIdentity(deps.hostname),
          leaseDurationMs: config.leaderElectionLeaseDuration,
          renewDeadlineMs: config.leaderElectionRenewDeadline,
          retryPeriodMs: config.leaderElectionRetryPeriod,
        }
      : undefined,
  });
  // Without leader election this process alone runs the controllers: it reports itself as the
  // leader, so the gauge reads the same under `up` as in an elected Deployment.
  if (!config.leaderElect) leaderGauge(deps.registry).set({ name: config.leaderElectionId }, 1);
  // Probes answer while registration waits for the API server (the workload signer's discovery
  // retries until it answers): alive, but not ready until the controllers are registered.
  let registered = false;
  const server = await startProbeServer({
    registry: deps.registry,
    logger: deps.logger,
    bindAddress: config.metricsBindAddress,
    readyChecks: () => [{ name: 'controllers-registered', check: () => registered }, ...mgr.readyChecks()],
    secure: config.metricsSecure ? await secureMetrics(config, client, deps, clock) : undefined,
  });
  deps.logger.info({ url: server.url }, 'serving metrics and probes');
  deps.onListening?.(server);
  try {
    await deps.register?.(mgr, client, config, deps.signal);
    registered = true;
    await mgr.run(deps.signal);
  } finally {
    client.close();
    electionClient?.close();
    await server.close();
  }
}
