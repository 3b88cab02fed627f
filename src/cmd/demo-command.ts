/**
 * The `demo` subcommand's flags. Its code (demo.ts, with the Kubernetes client: a second of CPU to
 * load) is imported when it runs, so no other command, `up` above all, starts by loading it.
 */
import type { Command } from 'commander';
import type { DemoFlags } from './demo.js';

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description("play a kubelet's life: bootstrap token, client certificate, Node and Lease, serving certificate by policy, HTTPS with it, client certificate rotation, pods' SPIFFE certificates in mutual TLS")
    .option('--kubeconfig <file>', 'admin kubeconfig of the cluster (default: $KUBECONFIG or ~/.kube/config)')
    .option('--node <name>', 'node name to play (default: demo- and five random letters)')
    .option('--address <ip>', "the node's InternalIP (default: a 10.244.0.0/16 address no Node holds; the serving policy refuses loopback and other Nodes' addresses)")
    .option('--timeout <seconds>', 'how long to wait for each certificate', '60')
    .option('--workload-signer <name>', 'the PodCertificateRequest signer the pods ask (kube-identity controller --workload-signer-names; up signs for it)', 'kube-identity.io/workload')
    .action(async (flags: DemoFlags) => {
      const { runDemo } = await import('./demo.js');
      await runDemo(flags);
    });
}
