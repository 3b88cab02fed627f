import { ConfigError, loadControllerConfig } from './load.js';

const problemsOf = async (flags: Record<string, unknown>): Promise<string[]> => {
  try {
    await loadControllerConfig({ flags });
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
};

describe('workload signer options', () => {
  it('is off by default, with the API key types and a day as the longest lifetime', async () => {
    const c = await loadControllerConfig({});
    expect([c.workloadSignerNames, c.workloadSignerTrustDomain, c.workloadSignerMaxDuration, c.workloadSignerKeyTypes]).toEqual([
      '',
      'cluster.local',
      86_400_000,
      'RSA3072,RSA4096,ECDSAP256,ECDSAP384,ECDSAP521,ED25519',
    ]);
  });

  it('reads flags, env and file alike', async () => {
    const c = await loadControllerConfig({ env: { KUBE_IDENTITY_WORKLOAD_SIGNER_NAMES: 'example.com/a, example.com/b', KUBE_IDENTITY_WORKLOAD_SIGNER_CERT_FILE: 'c', KUBE_IDENTITY_WORKLOAD_SIGNER_KEY_FILE: 'k' } });
    expect(c.workloadSignerNames).toBe('example.com/a, example.com/b');
  });

  it('refuses what would make a wrong or ambiguous identity, each problem named', async () => {
    expect(
      await problemsOf({
        workloadSignerNames: 'kubernetes.io/kube-apiserver-client-pod,not a name,example.com/a,example.com/a,example.com/csr',
        customSigners: 'example.com/csr=c:k',
        workloadSignerTrustDomain: 'Example.ORG',
        workloadSignerMaxDuration: '30m',
        workloadSignerKeyTypes: 'RSA2048',
      }),
    ).toEqual([
      'workloadSignerNames entry "kubernetes.io/kube-apiserver-client-pod": kubernetes.io signer names are reserved for Kubernetes',
      'workloadSignerNames entry "not a name": signer name must be <fully qualified domain>/<path>',
      'workloadSignerNames entry "example.com/a": listed twice',
      'workloadSignerNames entry "example.com/csr": also a customSigners entry; a signer name has one CA',
      'workloadSignerTrustDomain: must consist of lowercase letters, digits, ".", "-" and "_" (SPIFFE trust domain)',
      'workloadSignerCertFile and workloadSignerKeyFile are required with workloadSignerNames',
      "workloadSignerMaxDuration: must be between 1h and 2184h (the API's maxExpirationSeconds bounds)",
      'workloadSignerKeyTypes: unknown key type "RSA2048" (one of RSA3072, RSA4096, ECDSAP256, ECDSAP384, ECDSAP521, ED25519)',
      'workloadSignerKeyTypes: at least one key type is required',
    ]);
    expect(await problemsOf({ workloadSignerNames: 'example.com/a', workloadSignerCertFile: 'c', workloadSignerKeyFile: 'k', workloadSignerMaxDuration: '2184h' })).toEqual([]);
    expect(await problemsOf({ workloadSignerNames: 'example.com/a', workloadSignerCertFile: 'c', workloadSignerKeyFile: 'k', workloadSignerMaxDuration: '2185h' })).toHaveLength(1);
  });
});
