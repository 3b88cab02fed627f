/**
 * `kube-identity apiserver`: runs the embedded API server on a data directory (CA, serving
 * certificate, keys, admin kubeconfig and the SQLite store live there) until SIGINT or SIGTERM.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { startEmbeddedServer } from '../apiserver/embedded.js';
import { shutdownOnSignals } from '../lib/shutdown.js';
import { createLogger } from '../log/logger.js';

export interface ApiserverFlags {
  dataDir: string;
  host: string;
  port: string;
  storage: 'sqlite' | 'memory';
  logLevel: string;
  bookmarkIntervalMs: string;
  tokenAuthFile?: string;
  kubeconfigOut?: string;
}

/** The embedded server's options from the shared flags (used by `apiserver` and `up`). */
export function embeddedOptions(flags: ApiserverFlags) {
  return {
    dataDir: flags.dataDir,
    storage: flags.storage,
    host: flags.host,
    port: Number(flags.port),
    bookmarkIntervalMs: Number(flags.bookmarkIntervalMs),
    tokenFile: flags.tokenAuthFile ? readFileSync(flags.tokenAuthFile, 'utf8') : undefined,
    kubeconfigOut: flags.kubeconfigOut,
  };
}

async function run(flags: ApiserverFlags): Promise<void> {
  const logger = createLogger({ level: flags.logLevel, name: 'kube-identity-apiserver' });
  const server = await startEmbeddedServer({ ...embeddedOptions(flags), logger });
  logger.info({ url: server.url, kubeconfig: server.kubeconfigPath }, 'api server ready');
  const shutdown = shutdownOnSignals(process, () => process.exit(1));
  await new Promise<void>((resolve) => shutdown.signal.addEventListener('abort', () => resolve(), { once: true }));
  logger.info('shutting down');
  await server.close();
  shutdown.dispose();
}

/** The apiserver flags, shared with `up`. */
export function addApiserverOptions(cmd: Command, defaultPort: string): Command {
  return cmd
    .option('--data-dir <dir>', 'directory for the CA, certificates, keys, kubeconfig and store', '.kube-identity')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', defaultPort)
    .option('--storage <kind>', 'sqlite (in the data directory) or memory', 'sqlite')
    .option('--log-level <level>', 'pino log level', 'info')
    .option('--bookmark-interval-ms <ms>', 'interval of watch bookmarks', '60000')
    .option('--kubeconfig-out <file>', 'where to write the admin kubeconfig (default: DATA_DIR/kubeconfig)')
    .option('--token-auth-file <file>', 'static bearer tokens as CSV: token,user,uid,"group1,group2" (kube-apiserver format)');
}

export function registerApiserverCommand(program: Command): void {
  addApiserverOptions(program.command('apiserver').description('run the embedded Kubernetes-compatible API server'), '6443').action(
    async (flags: ApiserverFlags) => {
      await run(flags);
    },
  );
}
