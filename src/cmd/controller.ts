/**
 * `kube-identity controller`: the CSR approver, signers, cleaner and revision keeper, against the
 * cluster in a kubeconfig (or in-cluster). Every option comes from the config schema, so `--help`,
 * the environment variables and the YAML file can never drift apart.
 */
import os from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Command } from 'commander';
import { Registry } from 'prom-client';
import { loadControllerConfig } from '../config/load.js';
import { CONTROLLER_CONFIG_SCHEMA, type ControllerConfig } from '../config/schema.js';
import { shutdownOnSignals } from '../lib/shutdown.js';
import { kubernetesUserAgent } from '../lib/user-agent.js';
import { buildVersion } from '../lib/version.js';
import { createLogger, type Logger } from '../log/logger.js';
import { registerBuildInfo } from '../metrics/build-info.js';
import { addConfigOptions, configSources, loadOrExit } from './options.js';

/**
 * Loads the kubeconfig (into `kc`) the way kubectl and client-go do when no path is given. The
 * Kubernetes client is imported here, not with this module: `up`'s main thread never loads it.
 */
export async function loadKubeConfig(file: string, kc?: KubeConfig): Promise<KubeConfig> {
  kc ??= new (await import('@kubernetes/client-node')).KubeConfig();
  if (file) kc.loadFromFile(file);
  else kc.loadFromDefault();
  return kc;
}

/** Runs the controller until `signal` aborts; shared by `controller` and `up`. */
export async function runControllerProcess(
  config: ControllerConfig,
  logger: Logger,
  signal: AbortSignal,
  opts: { kubeConfig?: KubeConfig; onListening?: (metricsUrl: string) => void } = {},
): Promise<void> {
  const kubeConfig = opts.kubeConfig;
  const onListening = opts.onListening;
  const version = buildVersion();
  logger.info({ version: version.version, commit: version.commit, nodeVersion: version.nodeVersion }, 'starting kube-identity controller');
  const registry = new Registry();
  registerBuildInfo(registry, version);
  // Loaded only once the configuration is good: a bad flag is reported without loading the controllers.
  const [{ runController }, { registerControllers }] = await Promise.all([
    import('../controller/run-controller.js'),
    import('../controller/register.js'),
  ]);
  await runController(config, {
    onListening: onListening && ((server) => onListening(server.url)),
    logger,
    registry,
    kubeConfig: kubeConfig ?? (await loadKubeConfig(config.kubeconfig)),
    signal,
    hostname: process.env.POD_NAME ?? os.hostname(),
    userAgent: kubernetesUserAgent('kube-identity', version),
    register: (mgr, client, cfg, stop) => registerControllers(mgr, client, cfg, { ...mgr.shared, signal: stop }),
  });
}

export function registerControllerCommand(program: Command): void {
  const cmd = program.command('controller').description('run the CSR approver, signers, cleaner and revision controllers');
  addConfigOptions(cmd, CONTROLLER_CONFIG_SCHEMA).action(async (opts: Record<string, unknown>) => {
    const config = await loadOrExit(() => loadControllerConfig(configSources(opts, CONTROLLER_CONFIG_SCHEMA)));
    let kubeConfig: KubeConfig;
    try {
      kubeConfig = await loadKubeConfig(config.kubeconfig);
    } catch (err) {
      const which = config.kubeconfig || '$KUBECONFIG or ~/.kube/config';
      process.stderr.write(`kube-identity: cannot read the kubeconfig (${which}): ${(err as Error).message.split('\n')[0] ?? ''}\n`);
      process.exit(1);
    }
    const logger = createLogger({ level: config.logLevel, name: 'kube-identity-controller' });
    const shutdown = shutdownOnSignals(process, () => process.exit(1));
    try {
      await runControllerProcess(config, logger, shutdown.signal, { kubeConfig });
    } catch (err) {
      logger.error({ err }, 'controller stopped');
      process.exit(1);
    }
    shutdown.dispose();
    logger.info('controller stopped');
  });
}
