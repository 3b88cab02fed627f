/**
 * `kube-identity apiserver`: runs the embedded API server on a data directory (CA, serving
 * certificate, keys, admin kubeconfig and the SQLite store live there) until SIGINT or SIGTERM.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { EmbeddedServerOptions } from '../apiserver/server/embedded.js';
import { ConfigError, loadApiserverConfig } from '../config/load.js';
import { tlsSettings } from '../config/tls.js';
import { APISERVER_CONFIG_SCHEMA, type ApiserverConfig } from '../config/server-schema.js';
import { shutdownOnSignals } from '../lib/shutdown.js';
import { parseServiceIpRange } from '../lib/service-range.js';
import { buildVersion } from '../lib/version.js';
import { createLogger } from '../log/logger.js';
import { explainStartError } from './conflicts.js';
import { watchStart } from './start-undo.js';
import { addConfigOptions, configSources, loadOrExit } from './options.js';
import { auditOptions } from './audit-options.js';
import type { Policy } from '../apiserver/audit/types.js';

/** The embedded server's options from a validated config (used by `apiserver` and `up`). */
/** `auditDefault`: the policy when --audit-policy-file names none (up's default). */
export function embeddedOptions(config: ApiserverConfig, auditDefault?: Policy): Omit<EmbeddedServerOptions, 'logger'> {
  const read = (key: 'tokenAuthFile' | 'etcdCafile' | 'etcdCertfile' | 'etcdKeyfile' | 'clientCaFile'): Buffer | undefined => {
    try {
      return config[key] ? readFileSync(config[key]) : undefined;
    } catch (err) {
      throw new ConfigError([`${key}: cannot read ${config[key]}: ${(err as Error).message}`]);
    }
  };
  const tokenFile = read('tokenAuthFile')?.toString('utf8');
  const etcd =
    config.storage === 'etcd'
      ? {
          endpoints: config.etcdServers.split(',').filter((u) => u !== ''),
          prefix: config.etcdPrefix,
          tls: { ca: read('etcdCafile'), cert: read('etcdCertfile'), key: read('etcdKeyfile') },
          compactionIntervalMs: config.etcdCompactionInterval,
        }
      : undefined;
  return {
    etcd,
    eventTtlSeconds: Math.ceil(config.eventTtl / 1000),
    countMetricPollPeriodMs: config.etcdCountMetricPollPeriod,
    dbMetricPollIntervalMs: config.etcdDbMetricPollInterval,
    serviceRange: parseServiceIpRange(config.serviceClusterIpRange),
    dataDir: config.dataDir,
    storage: config.storage as EmbeddedServerOptions['storage'],
    host: config.host,
    port: config.port,
    bookmarkIntervalMs: config.bookmarkIntervalMs,
    tokenFile,
    kubeconfigOut: config.kubeconfigOut || undefined,
    clientCaPem: read('clientCaFile')?.toString('utf8'),
    flowControl: {
      maxRequestsInflight: config.maxRequestsInflight,
      maxMutatingRequestsInflight: config.maxMutatingRequestsInflight,
      priorityAndFairness: config.enablePriorityAndFairness,
      maxEventLoopDelayMs: config.maxEventLoopDelay,
    },
    requestDeadlineMs: config.requestTimeout,
    disableHttp2: config.disableHttp2Serving,
    http2MaxStreamsPerConnection: config.http2MaxStreamsPerConnection,
    goawayChance: config.goawayChance,
    tlsFrontWorkers: config.tlsFrontWorkers,
    audit: auditOptions(config, process.stdout, auditDefault),
    anonymousAuth: config.anonymousAuth,
    encryptionProviderConfig: config.encryptionProviderConfig || undefined,
    encryptionProviderConfigAutomaticReload: config.encryptionProviderConfigAutomaticReload,
    tls: { certFile: config.tlsCertFile || undefined, keyFile: config.tlsPrivateKeyFile || undefined, ...tlsSettings(config) },
  };
}

async function run(opts: Record<string, unknown>): Promise<void> {
  const config = await loadOrExit(() => loadApiserverConfig(configSources(opts, APISERVER_CONFIG_SCHEMA)));
  const options = await loadOrExit(async () => embeddedOptions(config));
  const logger = createLogger({ level: config.logLevel, name: 'kube-identity-apiserver' });
  // Loaded only once the configuration is good: a bad flag is reported without loading the server.
  const { startEmbeddedServer } = await import('../apiserver/server/embedded.js');
  const start = watchStart(path.resolve(options.dataDir));
  const server = await startEmbeddedServer({ ...options, logger }).catch((err: unknown) => {
    start.undo(err);
    throw explainStartError(err, '--port');
  });
  const { version, commit } = buildVersion();
  logger.info({ url: server.url, kubeconfig: server.kubeconfigPath, version, commit }, 'api server ready');
  const shutdown = shutdownOnSignals(process, () => process.exit(1));
  const signalled = new Promise<void>((resolve) => shutdown.signal.addEventListener('abort', () => resolve(), { once: true }));
  // A server that can no longer accept connections stops, non-zero, for its supervisor to restart it.
  const broken = await Promise.race([signalled, server.broken]);
  logger.info('shutting down');
  await server.close();
  shutdown.dispose();
  if (broken) throw broken;
}

export function registerApiserverCommand(program: Command): void {
  addConfigOptions(program.command('apiserver').description('run the embedded Kubernetes-compatible API server'), APISERVER_CONFIG_SCHEMA).action(
    async (opts: Record<string, unknown>) => {
      await run(opts);
    },
  );
}
