/**
 * `kube-identity controller`: the CSR approver, signers, cleaner and revision keeper, against the
 * cluster in a kubeconfig (or in-cluster). Every option comes from the config schema, so `--help`,
 * the environment variables and the YAML file can never drift apart.
 */
import os from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import type { Command } from 'commander';
import { Registry } from 'prom-client';
import { ConfigError, loadControllerConfig } from '../config/load.js';
import { describeConfig, type ConfigKey, type ControllerConfig } from '../config/schema.js';
import { registerControllers } from '../controller/register.js';
import { runController } from '../controller/run-controller.js';
import { shutdownOnSignals } from '../lib/shutdown.js';
import { createLogger, type Logger } from '../log/logger.js';

/** Loads the kubeconfig the way kubectl and client-go do when no path is given. */
export function loadKubeConfig(file: string): KubeConfig {
  const kc = new KubeConfig();
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
  await runController(config, {
    onListening: onListening && ((server) => onListening(server.url)),
    logger,
    registry: new Registry(),
    kubeConfig: kubeConfig ?? loadKubeConfig(config.kubeconfig),
    signal,
    hostname: process.env.POD_NAME ?? os.hostname(),
    register: registerControllers,
  });
}

/** Flags as commander parsed them, restricted to schema keys that were actually given. */
function givenFlags(opts: Record<string, unknown>): Partial<Record<ConfigKey, unknown>> {
  const out: Partial<Record<ConfigKey, unknown>> = {};
  for (const d of describeConfig()) if (opts[d.key] !== undefined) out[d.key] = opts[d.key];
  return out;
}

export function registerControllerCommand(program: Command): void {
  const cmd = program
    .command('controller')
    .description('run the CSR approver, signers, cleaner and revision controllers')
    .option('--config <file>', 'YAML configuration file with the camelCase keys below (flags and env win)');
  for (const d of describeConfig()) {
    const flag = d.type === 'bool' ? `${d.flag} [bool]` : `${d.flag} <${d.type}>`;
    cmd.option(flag, `${d.description} [env ${d.env}; default ${JSON.stringify(d.default)}]`);
  }
  cmd.action(async (opts: Record<string, unknown>) => {
    let config: ControllerConfig;
    try {
      config = await loadControllerConfig({
        flags: givenFlags(opts),
        env: process.env,
        file: typeof opts.config === 'string' ? opts.config : undefined,
      });
    } catch (err) {
      if (err instanceof ConfigError) {
        process.stderr.write(`${err.message}\n`);
        process.exit(2);
      }
      throw err;
    }
    const logger = createLogger({ level: config.logLevel, name: 'kube-identity-controller' });
    const shutdown = shutdownOnSignals(process, () => process.exit(1));
    try {
      await runControllerProcess(config, logger, shutdown.signal);
    } catch (err) {
      logger.error({ err }, 'controller stopped');
      process.exit(1);
    }
    shutdown.dispose();
    logger.info('controller stopped');
  });
}
