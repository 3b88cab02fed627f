/** The `kube-identity` command tree: one subcommand per component, each --help ending with examples. */
import { Command } from 'commander';
import { versionLine } from '../lib/version.js';
import { registerApiserverCommand } from './apiserver.js';
import { registerControllerCommand } from './controller.js';
import { registerDemoCommand } from './demo-command.js';
import { registerKubeconfigCommand } from './kubeconfig.js';
import { registerUpCommand } from './up.js';
import { registerVersionCommand } from './version.js';

/** The end of each command's --help: what people type first. */
const EXAMPLES: Record<string, string[]> = {
  up: [
    'kube-identity up                                  # API server on 127.0.0.1:6443, state in ./.kube-identity',
    'kube-identity up --port 0 --storage memory        # any free port, nothing kept on disk',
    'kube-identity up --metrics-bind-address 127.0.0.1:9090 --log-level debug',
  ],
  apiserver: [
    'kube-identity apiserver --data-dir /var/lib/kube-identity',
    'kube-identity apiserver --host 0.0.0.0 --port 6443 --token-auth-file tokens.csv',
  ],
  controller: [
    'kube-identity controller --kubeconfig ~/.kube/config --leader-elect=false',
    'kube-identity controller --cluster-signing-cert-file ca.crt --cluster-signing-key-file ca.key',
    'KUBE_IDENTITY_LOG_LEVEL=debug kube-identity controller --config controller.yaml',
  ],
  demo: [
    'kube-identity demo --kubeconfig .kube-identity/kubeconfig',
    'kube-identity demo --kubeconfig kind.kubeconfig --node worker-7 --timeout 120',
  ],
  kubeconfig: ['kube-identity kubeconfig admin                 # when the admin client certificate expires', 'kube-identity kubeconfig admin --renew --data-dir .kube-identity'],
  version: ['kube-identity version', 'kube-identity version -o json', 'kube-identity --version'],
};

function addExamples(cmd: Command): void {
  const lines = EXAMPLES[cmd.name()];
  if (lines) cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
}

/** The whole command tree; main.ts runs it, tests ask it for --help in-process. */
export function buildProgram(): Command {
  const program = new Command();
  program
    .name('kube-identity')
    .description('Hands out identities in a Kubernetes cluster')
    .version(versionLine(), '--version', 'print the version and exit')
    .showHelpAfterError("(run 'kube-identity --help' for usage)");
  registerUpCommand(program);
  registerApiserverCommand(program);
  registerControllerCommand(program);
  registerDemoCommand(program);
  registerKubeconfigCommand(program);
  registerVersionCommand(program);
  for (const cmd of program.commands) {
    addExamples(cmd);
    // One line after the error, not the whole help above which the error would scroll away.
    cmd.showHelpAfterError(`(run 'kube-identity ${cmd.name()} --help' for usage)`);
  }
  program.addHelpText('after', `\nExamples:\n  kube-identity up\n  kube-identity controller --help\n  kube-identity version\n`);
  return program;
}
