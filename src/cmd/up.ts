/**
 * `kube-identity up`: the main job on a fresh machine. Starts the embedded API server (SQLite in
 * the data directory) and the controller against it in one process, with the cluster CA as the
 * signers' CA (so issued client certificates authenticate), and prints once where everything is.
 * Logs go to a file in the data directory so the terminal stays readable.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { pino } from 'pino';
import { startEmbeddedServer } from '../apiserver/embedded.js';
import { ConfigError, loadControllerConfig } from '../config/load.js';
import { shutdownOnSignals } from '../lib/shutdown.js';
import { createLogger } from '../log/logger.js';
import { addApiserverOptions, embeddedOptions, type ApiserverFlags } from './apiserver.js';
import { loadKubeConfig, runControllerProcess } from './controller.js';

interface UpFlags extends ApiserverFlags {
  metricsBindAddress: string;
  logFile?: string;
}

function banner(url: string, kubeconfig: string, metrics: string, logFile: string): string {
  const relative = path.relative(process.cwd(), kubeconfig);
  const kc = relative.startsWith('..') ? kubeconfig : relative;
  return [
    '',
    'kube-identity is up.',
    `  API server   ${url}`,
    `  kubeconfig   ${kc}`,
    `  metrics      ${metrics}/metrics`,
    `  logs         ${logFile}`,
    '',
    'Try:',
    `  kubectl --kubeconfig ${kc} get csr`,
    `  kubectl --kubeconfig ${kc} api-resources`,
    `  node dist/src/cmd/main.js demo --kubeconfig ${kc}    # a node joins: CSR approved, issued, used over mTLS`,
    '',
    'Press Ctrl-C to stop.',
    '',
  ].join('\n');
}

async function up(flags: UpFlags): Promise<void> {
  const logFile = path.resolve(flags.logFile ?? path.join(flags.dataDir, 'kube-identity.log'));
  const logger = createLogger({ level: flags.logLevel, destination: pino.destination({ dest: logFile, mkdir: true, sync: true }) });
  const server = await startEmbeddedServer({ ...embeddedOptions(flags), logger: logger.child({ component: 'apiserver' }) });
  let config;
  try {
    config = await loadControllerConfig({
      flags: {
        kubeconfig: server.kubeconfigPath,
        clusterSigningCertFile: server.caCertFile,
        clusterSigningKeyFile: server.caKeyFile,
        leaderElect: false,
        metricsBindAddress: flags.metricsBindAddress,
        logLevel: flags.logLevel,
      },
      env: process.env,
    });
  } catch (err) {
    await server.close();
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const shutdown = shutdownOnSignals(process, () => process.exit(1));
  try {
    await runControllerProcess(config, logger.child({ component: 'controller' }), shutdown.signal, {
      kubeConfig: loadKubeConfig(server.kubeconfigPath),
      onListening: (metricsUrl) => process.stdout.write(banner(server.url, server.kubeconfigPath, metricsUrl, logFile)),
    });
  } finally {
    await server.close();
    shutdown.dispose();
  }
}

export function registerUpCommand(program: Command): void {
  addApiserverOptions(
    program.command('up').description('run the embedded API server and the controller together, and print a kubeconfig'),
    '6443',
  )
    .option('--metrics-bind-address <addr>', "the controller's /metrics, /healthz and /readyz address", '127.0.0.1:8080')
    .option('--log-file <file>', 'where logs go (default: DATA_DIR/kube-identity.log)')
    .action(async (flags: UpFlags) => {
      await up(flags);
    });
}
