/**
 * `kube-identity kubeconfig admin`: the admin kubeconfig's client certificate (CN=kubernetes-admin,
 * O=system:masters, a year, as kubeadm's admin.conf): when it expires, and with --renew a new one
 * from the cluster CA in the data directory, written into admin.crt/admin.key and the kubeconfig
 * (as `kubeadm certs renew admin.conf`). The server need not be stopped: it trusts any certificate
 * its CA issued, and the old one stays valid until it expires.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { adminCertificateExpiry, CREDENTIAL_FILES, renewAdminCredentials } from '../apiserver/server/credentials.js';

interface AdminFlags {
  dataDir: string;
  kubeconfigOut: string;
  renew?: boolean;
}

async function admin(flags: AdminFlags): Promise<void> {
  const dataDir = path.resolve(flags.dataDir);
  const kubeconfig = flags.kubeconfigOut ? path.resolve(flags.kubeconfigOut) : path.join(dataDir, 'kubeconfig');
  if (flags.renew) {
    const renewed = await renewAdminCredentials(dataDir, kubeconfig);
    process.stdout.write(`renewed the admin client certificate in ${renewed.kubeconfig}: valid until ${renewed.notAfter.toISOString()}\n`);
    return;
  }
  const certFile = path.join(dataDir, CREDENTIAL_FILES.adminCertPem);
  if (!existsSync(certFile)) throw new Error(`no admin certificate in ${dataDir}: start kube-identity up or apiserver on it first`);
  const expiry = adminCertificateExpiry({ adminCertPem: readFileSync(certFile, 'utf8') });
  const days = Math.floor((expiry.getTime() - Date.now()) / 86_400_000);
  const state = days < 0 ? 'EXPIRED' : `${days} days left`;
  process.stdout.write(`admin client certificate (CN=kubernetes-admin, O=system:masters) (${certFile}): valid until ${expiry.toISOString()} (${state})\n`);
}

export function registerKubeconfigCommand(program: Command): void {
  const kubeconfig = program.command('kubeconfig').description("the admin kubeconfig's client certificate: check its expiry, renew it");
  kubeconfig
    .command('admin')
    .description('print when the admin client certificate expires; with --renew, issue a new one (a year) and rewrite the kubeconfig')
    .option('--data-dir <dir>', 'the data directory of kube-identity up or apiserver (its CA signs the new certificate)', '.kube-identity')
    .option('--kubeconfig-out <file>', 'the admin kubeconfig to rewrite; empty means DATA_DIR/kubeconfig', '')
    .option('--renew', 'issue a new admin client certificate and write it into the kubeconfig')
    .action(async (flags: AdminFlags) => {
      await admin(flags);
    });
}
