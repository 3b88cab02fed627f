/** deploy/examples and deploy/kind hold valid inputs: real PKCS#10 requests and a loadable config. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadControllerConfig } from '../../src/config/load.js';
import { parseCertificateRequestPem } from '../../src/pki/csr.js';
import { DEPLOY_DIR, type Obj } from './manifests.js';

const EXAMPLES = join(DEPLOY_DIR, 'examples');

describe('deploy/examples', () => {
  const csrFiles = readdirSync(EXAMPLES).filter((f) => f.startsWith('csr-'));

  it.each(csrFiles)('%s is a v1 CSR whose request is a self-signed PKCS#10 matching its usages', (file) => {
    const csr = parse(readFileSync(join(EXAMPLES, file), 'utf8')) as Obj;
    expect([csr.apiVersion, csr.kind]).toEqual(['certificates.k8s.io/v1', 'CertificateSigningRequest']);
    const spec = csr.spec as Obj;
    expect(spec.signerName).toMatch(/^[a-z0-9.-]+\/[a-z0-9.-]+$/);
    const parsed = parseCertificateRequestPem(Buffer.from(String(spec.request), 'base64').toString());
    expect(parsed.publicKeyAlgorithm).toBe('ECDSA');
    if (spec.signerName === 'kubernetes.io/kubelet-serving') {
      expect(parsed.subject.commonName).toBe(spec.username);
      expect(parsed.dnsNames.length + parsed.ipAddresses.length).toBeGreaterThan(0);
      expect(spec.usages).toContain('server auth');
    }
    if (spec.signerName === 'kubernetes.io/kube-apiserver-client') expect(spec.usages).toEqual(expect.arrayContaining(['client auth']));
  });

  it('controller-config.yaml is accepted by the controller config loader', async () => {
    const config = await loadControllerConfig({ file: join(EXAMPLES, 'controller-config.yaml') });
    expect(config.clusterSigningDuration).toBe(8760 * 3_600_000);
    expect([config.leaderElectionNamespace, config.controllerNamespace, config.trustBundleNamespace]).toEqual(['kube-identity', 'kube-identity', 'kube-identity']);
  });

  it('the kind cluster config is a kind v1alpha4 Cluster with the kubeadm patch', () => {
    const cluster = parse(readFileSync(join(DEPLOY_DIR, 'kind', 'cluster.yaml'), 'utf8')) as Obj;
    expect([cluster.apiVersion, cluster.kind]).toEqual(['kind.x-k8s.io/v1alpha4', 'Cluster']);
    const patch = parse((cluster.kubeadmConfigPatches as string[])[0] ?? '') as Obj;
    expect(patch).toMatchObject({ kind: 'ClusterConfiguration', controllerManager: { extraArgs: { controllers: '*,-csrsigning' } } });
  });
});
