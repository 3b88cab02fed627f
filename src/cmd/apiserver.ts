/**
 * `kube-identity apiserver`: runs the embedded API server on a data directory (CA, serving
 * certificate, admin kubeconfig and the SQLite store live there) until SIGINT or SIGTERM.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { ensureIdentity, writeKubeconfig } from '../apiserver/bootstrap.js';
import { csrStrategy } from '../apiserver/registry/csr.js';
import { rbacStrategies } from '../apiserver/registry/rbac.js';
import { reviewStrategies } from '../apiserver/registry/reviews.js';
import { startApiServer } from '../apiserver/server.js';
import { ADMIN_USER, allowAllAuthorizer, staticTokenAuthenticator } from '../apiserver/static-auth.js';
import { MemoryStore } from '../apiserver/storage/memory.js';
import { SqliteStore } from '../apiserver/storage/sqlite.js';
import type { Store } from '../apiserver/storage/store.js';
import { createLogger } from '../log/logger.js';

interface ApiserverFlags {
  dataDir: string;
  host: string;
  port: string;
  storage: 'sqlite' | 'memory';
  logLevel: string;
  bookmarkIntervalMs: string;
}

async function run(flags: ApiserverFlags): Promise<void> {
  const logger = createLogger({ level: flags.logLevel, name: 'kube-identity-apiserver' });
  const dataDir = path.resolve(flags.dataDir);
  const identity = await ensureIdentity(dataDir, flags.host === '0.0.0.0' || flags.host === '::' ? [] : [flags.host]);
  const store: Store = flags.storage === 'memory' ? new MemoryStore() : SqliteStore.open(path.join(dataDir, 'store.db'));
  const server = await startApiServer({
    store,
    logger,
    tls: { certPem: identity.servingCertPem, keyPem: identity.servingKeyPem, clientCaPem: identity.caPem },
    host: flags.host,
    port: Number(flags.port),
    authenticator: staticTokenAuthenticator(new Map([[identity.adminToken, ADMIN_USER]])),
    authorizer: allowAllAuthorizer,
    extraStrategies: [csrStrategy, ...rbacStrategies(), ...reviewStrategies()],
    bookmarkIntervalMs: Number(flags.bookmarkIntervalMs),
  });
  const kubeconfig = writeKubeconfig(dataDir, server.url, identity);
  logger.info({ url: server.url, kubeconfig }, 'api server ready');
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    server
      .close()
      .then(() => store.close())
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

export function registerApiserverCommand(program: Command): void {
  program
    .command('apiserver')
    .description('run the embedded Kubernetes-compatible API server')
    .option('--data-dir <dir>', 'directory for the CA, certificates, kubeconfig and store', '.kube-identity')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', '6443')
    .option('--storage <kind>', 'sqlite (in the data directory) or memory', 'sqlite')
    .option('--log-level <level>', 'pino log level', 'info')
    .option('--bookmark-interval-ms <ms>', 'interval of watch bookmarks', '60000')
    .action(async (flags: ApiserverFlags) => {
      await run(flags);
    });
}
