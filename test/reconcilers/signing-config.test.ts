/** Which signers run with which CA files, and how the signing options are validated. */
import { ConfigError, loadControllerConfig, parseCustomSigners } from '../../src/config/load.js';
import { signingPlan } from '../../src/controller/signer/signing-plan.js';

const plan = async (flags: Record<string, string>) =>
  signingPlan(await loadControllerConfig({ flags })).map((e) => `${e.policy.controllerName} ${e.files.certFile}`);

describe('signing plan', () => {
  it('the shared pair serves every Kubernetes signer, legacy-unknown included (as kube-controller-manager)', async () => {
    expect(await plan({ clusterSigningCertFile: '/ca.crt', clusterSigningKeyFile: '/ca.key' })).toEqual([
      'csrsigning-kubelet-serving /ca.crt',
      'csrsigning-kubelet-client /ca.crt',
      'csrsigning-kube-apiserver-client /ca.crt',
      'csrsigning-legacy-unknown /ca.crt',
    ]);
  });

  it('each signer has its own pair of flags; up\'s split: client signers on the cluster CA, kubelet-serving on its own', async () => {
    expect(
      await plan({
        clusterSigningKubeletServingCertFile: '/serving.crt',
        clusterSigningKubeletServingKeyFile: '/serving.key',
        clusterSigningKubeletClientCertFile: '/ca.crt',
        clusterSigningKubeletClientKeyFile: '/ca.key',
        clusterSigningKubeApiserverClientCertFile: '/ca.crt',
        clusterSigningKubeApiserverClientKeyFile: '/ca.key',
        clusterSigningLegacyUnknownCertFile: '/legacy.crt',
        clusterSigningLegacyUnknownKeyFile: '/legacy.key',
      }),
    ).toEqual(['csrsigning-kubelet-serving /serving.crt', 'csrsigning-kubelet-client /ca.crt', 'csrsigning-kube-apiserver-client /ca.crt', 'csrsigning-legacy-unknown /legacy.crt']);
    await expect(loadControllerConfig({ flags: { clusterSigningCertFile: '/ca.crt', clusterSigningKeyFile: '/ca.key', clusterSigningLegacyUnknownCertFile: '/l.crt', clusterSigningLegacyUnknownKeyFile: '/l.key' } })).rejects.toThrow(
      'cannot specify default and per controller certs at the same time',
    );
  });

  it('with per-signer files only those signers run, and custom signers may share one CA', async () => {
    expect(
      await plan({
        clusterSigningKubeletServingCertFile: '/serving.crt',
        clusterSigningKubeletServingKeyFile: '/serving.key',
        customSigners: 'example.com/a=/a.crt:/a.key; example.com/b=/a.crt:/a.key',
      }),
    ).toEqual(['csrsigning-kubelet-serving /serving.crt', 'csrsigning-example-com-a /a.crt', 'csrsigning-example-com-b /a.crt']);
  });

  it('no CA files means no signers', async () => {
    expect(await plan({})).toEqual([]);
  });

  it('reports every signing misconfiguration at once', async () => {
    const err = await loadControllerConfig({
      flags: {
        clusterSigningCertFile: '/ca.crt',
        clusterSigningKeyFile: '/ca.key',
        clusterSigningKubeletClientCertFile: '/c.crt',
        customSigners: 'kubernetes.io/mine;notaname;example.com/x=/only-cert',
      },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      'clusterSigningKubeletClientCertFile and clusterSigningKubeletClientKeyFile must be set together',
      'cannot specify default and per controller certs at the same time',
      'customSigners entry "kubernetes.io/mine": kubernetes.io signers are configured with their own options',
      'customSigners entry "notaname": signer name must be <fully qualified domain>/<path>',
      'customSigners entry "example.com/x=/only-cert": files must be given as CERT_FILE:KEY_FILE',
    ]);
  });

  it('a custom signer without files needs the shared pair', () => {
    expect(parseCustomSigners('example.com/x')).toEqual([{ signerName: 'example.com/x' }]);
    return expect(loadControllerConfig({ flags: { customSigners: 'example.com/x' } })).rejects.toThrow('has no CA files and clusterSigningCertFile is not set');
  });
});
