/**
 * `kube-identity up`: the main job on a fresh machine. Starts the embedded API server (SQLite in
 * the data directory) and the controller against it in one process, the controller on a thread of
 * its own (controller-thread.ts), with the cluster CA as the client signers' CA (so issued client
 * certificates authenticate) and the data directory's own kubelet-serving CA as that signer's, and
 * prints once where everything is.
 * Logs go to a file in the data directory so the terminal stays readable.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { pino } from 'pino';
import { CREDENTIAL_FILES } from '../apiserver/server/credentials.js';
import { controllerKubeConfig, controllerPolicyScope } from './controller-identity.js';
import { DEFAULT_LOG_FILE, DEFAULT_POLICY_FILE, defaultPolicy, writeDefaultPolicy } from '../apiserver/audit/default-policy.js';
import type { EmbeddedServer, EncryptionSummary } from '../apiserver/server/embedded.js';
import { loadControllerConfig, loadUpConfig } from '../config/load.js';
import type { ControllerConfig } from '../config/schema.js';
import { UP_CONFIG_SCHEMA, UP_CONTROLLER_OPTIONS, type UpConfig } from '../config/server-schema.js';
import { workloadSignerNames } from '../config/workload-signer.js';
import { shutdownOnSignals } from '../lib/shutdown.js';
import { createLogger } from '../log/logger.js';
import { embeddedOptions } from './apiserver.js';
import { ControllerStalledError, startControllerThread } from './controller-thread.js';
import { explainStartError } from './conflicts.js';
import { watchStart } from './start-undo.js';
import { addConfigOptions, configSources, loadOrExit } from './options.js';

/** A path as short as it can be said from here. */
function shown(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative.startsWith('..') ? file : relative;
}

/** What protects the data at rest: the encryption configuration in force. */
function encryptionLine(encryption: EncryptionSummary | undefined): string {
  if (!encryption) return 'none (--storage memory keeps nothing on disk)';
  const rules = encryption.rules.join('; ');
  return encryption.isDefault ? `Secrets encrypted at rest (${rules}; key in ${shown(encryption.configFile)})` : `${rules} (${shown(encryption.configFile)})`;
}

/** What the workload signer signs for, or that it is off. */
function workloadLine(config: ControllerConfig): string {
  const names = workloadSignerNames(config.workloadSignerNames);
  if (names.length === 0) return 'off (--workload-signer-names)';
  return `${names.join(', ')}: SPIFFE IDs spiffe://${config.workloadSignerTrustDomain}/ns/NAMESPACE/sa/SERVICE_ACCOUNT, CA ${shown(config.workloadSignerCertFile)} (ClusterTrustBundle per signer)`;
}

function banner(server: EmbeddedServer, metrics: string, logFile: string, audit: { policy: string; log: string }, config: ControllerConfig): string {
  const kc = shown(server.kubeconfigPath);
  return [
    '',
    'kube-identity is up.',
    `  API server   ${server.url}`,
    `  kubeconfig   ${kc}`,
    `  admin cert   valid until ${server.adminCertificateExpiry.toISOString().slice(0, 10)} (renew: kube-identity kubeconfig admin --renew --data-dir ${shown(server.dataDir)})`,
    `  encryption   ${encryptionLine(server.encryption)}`,
    `  metrics      ${metrics}/metrics`,
    `  logs         ${logFile}`,
    `  audit log    ${audit.log}  (policy ${audit.policy})`,
    `  pod certs    ${workloadLine(config)}`,
    '',
    'Try:',
    `  kubectl --kubeconfig ${kc} get csr`,
    `  kubectl --kubeconfig ${kc} api-resources`,
    `  node dist/src/cmd/main.js demo --kubeconfig ${kc}    # a kubelet's life: client and serving certificates, Node, Lease, rotation, pods in mutual TLS`,
    '',
    'Press Ctrl-C to stop.',
    '',
  ].join('\n');
}

/**
 * The controller options given to `up`, as flag values for the controller's loader (which runs its
 * own cross-checks on them): durations go back to text, in milliseconds.
 */
function controllerOptions(flags: UpConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(UP_CONTROLLER_OPTIONS)) {
    const value = flags[key as keyof UpConfig];
    out[key] = spec.type === 'duration' ? `${String(value)}ms` : value;
  }
  return { ...out, approveKubeletServing: flags.approveKubeletServing };
}

async function up(opts: Record<string, unknown>): Promise<void> {
  const given = await loadOrExit(() => loadUpConfig(configSources(opts, UP_CONFIG_SCHEMA)));
  const dataDir = path.resolve(given.dataDir);
  // up audits by default, to a log beside the store: with DATA_DIR/audit-policy.yaml, which is up's
  // default policy, written once the server is up (then the operator's to edit).
  const policyFile = given.auditPolicyFile || path.join(dataDir, DEFAULT_POLICY_FILE);
  const writePolicy = !given.auditPolicyFile && !existsSync(policyFile);
  const flags: UpConfig = {
    ...given,
    auditPolicyFile: writePolicy ? '' : policyFile,
    auditLogPath: given.auditLogPath || path.join(dataDir, DEFAULT_LOG_FILE),
  };
  const options = await loadOrExit(async () => embeddedOptions(flags, writePolicy ? defaultPolicy() : undefined));
  // Checked before anything starts; the paths are where the server writes its CA and kubeconfig.
  const config = await loadOrExit(() =>
    loadControllerConfig({
      flags: {
        ...controllerOptions(flags),
        kubeconfig: options.kubeconfigOut ? path.resolve(options.kubeconfigOut) : path.join(dataDir, 'kubeconfig'),
        // Trust domains apart: the client signers sign with the cluster CA (the API server's client
        // CA), kubelet-serving with a CA of its own, which kube-root-ca.crt does not hold.
        clusterSigningKubeApiserverClientCertFile: path.join(dataDir, CREDENTIAL_FILES.caPem),
        clusterSigningKubeApiserverClientKeyFile: path.join(dataDir, CREDENTIAL_FILES.caKeyPem),
        clusterSigningKubeletClientCertFile: path.join(dataDir, CREDENTIAL_FILES.caPem),
        clusterSigningKubeletClientKeyFile: path.join(dataDir, CREDENTIAL_FILES.caKeyPem),
        clusterSigningKubeletServingCertFile: path.join(dataDir, CREDENTIAL_FILES.kubeletServingCaPem),
        clusterSigningKubeletServingKeyFile: path.join(dataDir, CREDENTIAL_FILES.kubeletServingCaKeyPem),
        // Pods' SPIFFE certificates come from a CA of their own, neither the cluster's nor kubelet-serving's.
        workloadSignerCertFile: path.join(dataDir, CREDENTIAL_FILES.workloadCaPem),
        workloadSignerKeyFile: path.join(dataDir, CREDENTIAL_FILES.workloadCaKeyPem),
        // Elected as a Deployment is, so a second controller pointed at this cluster stands by
        // instead of acting on every CSR a second time; a clean stop releases the Lease at once.
        leaderElect: true,
        metricsBindAddress: flags.metricsBindAddress,
        logLevel: flags.logLevel,
      },
      env: process.env,
    }),
  );
  const logFile = path.resolve(flags.logFile || path.join(flags.dataDir, 'kube-identity.log'));
  const start = watchStart(dataDir);
  mkdirSync(path.dirname(logFile), { recursive: true, mode: 0o700 });
  const logger = createLogger({ level: flags.logLevel, destination: pino.destination({ dest: logFile, mode: 0o600, sync: true }) });
  // Started now, so the controller's modules load on its own thread while this one starts the server.
  const controller = startControllerThread({ config, logFile });
  // Loaded only once the configuration is good: a bad flag is reported without loading the server.
  const { startEmbeddedServer } = await import('../apiserver/server/embedded.js');
  // Beyond kube-apiserver's plaintext default: Secrets are encrypted unless the operator says how.
  // Its controller's identity may do what this controller configuration needs, nothing more.
  const server = await startEmbeddedServer({
    ...options,
    encryptSecretsByDefault: true,
    controllerPolicy: controllerPolicyScope(config),
    logger: logger.child({ logger: 'apiserver' }),
    // The controller thread's heartbeat, where an operator looks: /readyz/controller.
    healthChecks: [{ name: 'controller', check: () => controller.checkAlive() }],
  }).catch((err: unknown) => {
    controller.stop();
    start.undo(err);
    throw explainStartError(err, '--port');
  });
  if (writePolicy) writeDefaultPolicy(policyFile);
  const shutdown = shutdownOnSignals(process, () => process.exit(1));
  let listening = false;
  let failed: { err: unknown } | undefined;
  try {
    // Its own user, not the admin's: the audit log tells its approvals from a person's.
    const kubeConfig = await controllerKubeConfig(server.url, { certPem: server.credentials.caPem, keyPem: server.credentials.caKeyPem });
    controller.run(kubeConfig, (metricsUrl) => {
      if (!listening) process.stdout.write(banner(server, metricsUrl, logFile, { policy: policyFile, log: flags.auditLogPath }, config));
      listening = true;
    });
    // Signals reach only this thread: the first one stops the controller, which releases its Lease
    // over its open connection before the server below closes. New connections are refused at once,
    // as kube-apiserver stops its listener at SIGTERM (--shutdown-delay-duration 0): clients retry
    // elsewhere or later instead of handshaking with a server about to close, and a backlog of
    // connections their clients gave up on is dropped rather than drained first.
    const stopping = (): void => {
      logger.info({ reason: String(shutdown.signal.reason) }, 'stopping: new connections refused, controller stopping');
      server.stopAccepting();
      controller.stop();
    };
    if (shutdown.signal.aborted) stopping();
    else shutdown.signal.addEventListener('abort', stopping, { once: true });
    const controllerDone = controller.done.catch((err: unknown) => {
      // The API server goes down with it: exiting non-zero gets the pair restarted, as a
      // Deployment's controller would be, instead of a server left running without its controller.
      if (err instanceof ControllerStalledError) logger.error({ err, silentMs: Math.round(err.silentMs) }, 'controller thread stalled: stopping the API server');
      else logger.error({ err }, 'controller ended: stopping the API server');
      throw err;
    });
    // A server that can no longer accept connections (a TLS front ended) stops the pair the same way.
    const broken = await Promise.race([controllerDone, server.broken]);
    if (broken) {
      controller.stop();
      await controllerDone.catch(() => undefined);
      throw broken;
    }
  } catch (err) {
    failed = { err };
  } finally {
    logger.info('closing the api server');
    // Connections still open at the GOAWAY grace are left for the exit to end: ending each on this
    // thread took 3.4 s with a 2,000-node fleet's, and kube-apiserver's exit ends them the same way.
    // Every acknowledged write is on disk already (the store answers after its commit's fsync); the
    // audit backends are flushed and the store closed before the exit.
    await server.close({ exiting: true });
    shutdown.dispose();
  }
  if (failed) {
    // Only a start that never came up is undone; a cluster that ran keeps its data.
    if (!listening) start.undo(failed.err);
    throw explainStartError(failed.err, '--metrics-bind-address');
  }
  process.stdout.write('kube-identity stopped.\n');
  logger.info('stopped');
  process.exit(0);
}

export function registerUpCommand(program: Command): void {
  addConfigOptions(
    program.command('up').description('run the embedded API server and the controller together, and print a kubeconfig'),
    UP_CONFIG_SCHEMA,
  ).action(async (opts: Record<string, unknown>) => {
    await up(opts);
  });
}
