/** csrsigning-* against the real server: what each signer puts in a certificate, and when it refuses. */
import { copyFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BasicConstraintsExtension, ExtendedKeyUsageExtension, KeyUsageFlags, KeyUsagesExtension, SubjectAlternativeNameExtension, X509Certificate } from '@peculiar/x509';
import { createCertificateAuthority, type CaMaterial } from '../../src/pki/ca.js';
import { approve, certificateOf, createCsr, getCsr, startController, startHarness, waitFor, type Harness, type NewCsr, type RunningController } from './harness.js';

const HOUR = 3600_000;

describe('signers (real server, real controller)', () => {
  let h: Harness;
  let ctl: RunningController;
  let custom: CaMaterial;
  let serverCa: X509Certificate;
  const lateCa = { certFile: '', keyFile: '' };

  beforeAll(async () => {
    h = await startHarness();
    custom = await createCertificateAuthority({ commonName: 'custom-signer-ca' });
    writeFileSync(path.join(h.caDir, 'custom.crt'), custom.certPem);
    writeFileSync(path.join(h.caDir, 'custom.key'), custom.keyPem);
    lateCa.certFile = path.join(h.caDir, 'late.crt');
    lateCa.keyFile = path.join(h.caDir, 'late.key');
    serverCa = new X509Certificate(h.server.caPem);
    ctl = await startController(h, {
      clusterSigningCertFile: h.caFiles.certFile,
      clusterSigningKeyFile: h.caFiles.keyFile,
      clusterSigningDuration: '24h',
      customSigners: `example.com/custom=${path.join(h.caDir, 'custom.crt')}:${path.join(h.caDir, 'custom.key')};example.com/late=${lateCa.certFile}:${lateCa.keyFile}`,
    });
  });
  afterAll(async () => {
    await ctl?.stop();
    await h?.close();
  });

  async function issue(c: NewCsr): Promise<X509Certificate> {
    expect((await createCsr(h, 'admin', c)).status).toBe(201);
    await approve(h, c.name);
    const csr = await waitFor(`certificate for ${c.name}`, async () => {
      const got = await getCsr(h, c.name);
      return got.status?.certificate ? got : undefined;
    });
    const pem = certificateOf(csr);
    expect(pem.match(/BEGIN CERTIFICATE/g)).toHaveLength(1);
    return new X509Certificate(pem);
  }

  const lifetimeMs = (cert: X509Certificate): number => cert.notAfter.getTime() - cert.notBefore.getTime();
  const ekus = (cert: X509Certificate): string[] => [...(cert.getExtension(ExtendedKeyUsageExtension)?.usages ?? [])].map(String);

  it('kube-apiserver-client signs any subject with client usages, for the requested lifetime, issued by the shared CA', async () => {
    const cert = await issue({
      name: 'client-alice',
      signerName: 'kubernetes.io/kube-apiserver-client',
      usages: ['digital signature', 'key encipherment', 'client auth'],
      expirationSeconds: 7200,
      subject: { commonName: 'alice', organizations: ['devs'], dnsNames: ['alice.example'] },
    });
    expect(cert.subject).toBe('O=devs, CN=alice');
    expect(cert.issuer).toBe(serverCa.subject);
    expect(await cert.verify({ publicKey: serverCa.publicKey, signatureOnly: true })).toBe(true);
    expect(ekus(cert)).toEqual(['1.3.6.1.5.5.7.3.2']);
    const ku = cert.getExtension(KeyUsagesExtension);
    expect(ku?.usages).toBe(KeyUsageFlags.digitalSignature | KeyUsageFlags.keyEncipherment);
    expect(cert.getExtension(BasicConstraintsExtension)?.ca).toBe(false);
    expect(cert.getExtension(SubjectAlternativeNameExtension)?.names.toJSON()).toEqual([{ type: 'dns', value: 'alice.example' }]);
    // 2h is short-lived (< 8h): the 5 minute backdate is added to the total validity.
    expect(lifetimeMs(cert)).toBe(2 * HOUR + 5 * 60_000);
  });

  it('kubelet-serving signs a node serving request with server auth and its SANs, capped at the max duration', async () => {
    const cert = await issue({
      name: 'serving-worker-1',
      signerName: 'kubernetes.io/kubelet-serving',
      usages: ['digital signature', 'server auth'],
      expirationSeconds: 3 * 24 * 3600,
      subject: { commonName: 'system:node:worker-1', organizations: ['system:nodes'], dnsNames: ['worker-1'], ipAddresses: ['10.0.0.1'] },
    });
    expect(cert.subject).toBe('O=system:nodes, CN=system:node:worker-1');
    expect(ekus(cert)).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(cert.getExtension(SubjectAlternativeNameExtension)?.names.toJSON()).toEqual([
      { type: 'dns', value: 'worker-1' },
      { type: 'ip', value: '10.0.0.1' },
    ]);
    expect(lifetimeMs(cert)).toBe(24 * HOUR);
  });

  it('kube-apiserver-client-kubelet signs a kubelet client request with the max duration when none is asked', async () => {
    const cert = await issue({
      name: 'kubelet-client-worker-2',
      signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
      usages: ['digital signature', 'client auth'],
      subject: { commonName: 'system:node:worker-2', organizations: ['system:nodes'] },
    });
    expect(cert.subject).toBe('O=system:nodes, CN=system:node:worker-2');
    expect(ekus(cert)).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(lifetimeMs(cert)).toBe(24 * HOUR);
  });

  it('a custom signer signs with its own CA and no subject policy', async () => {
    const cert = await issue({
      name: 'custom-anything',
      signerName: 'example.com/custom',
      usages: ['digital signature', 'server auth', 'client auth'],
      expirationSeconds: 600,
      subject: { commonName: 'anything', uris: ['spiffe://example.com/a'] },
    });
    const ca = new X509Certificate(custom.certPem);
    expect(cert.issuer).toBe(ca.subject);
    expect(await cert.verify({ publicKey: ca.publicKey, signatureOnly: true })).toBe(true);
    expect(ekus(cert)).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    // 600 s is the floor; short-lived, so the backdate is added.
    expect(lifetimeMs(cert)).toBe(15 * 60_000);
  });

  const refused: [string, NewCsr, string][] = [
    [
      'kubelet-serving refuses a request with client auth only',
      { name: 'serving-client-only', signerName: 'kubernetes.io/kubelet-serving', usages: ['digital signature', 'client auth'], subject: { commonName: 'system:node:w', organizations: ['system:nodes'], dnsNames: ['w'] } },
      'usages did not match [digital signature key encipherment server auth]',
    ],
    [
      'kubelet-serving refuses a request without any DNS or IP SAN',
      { name: 'serving-no-san', signerName: 'kubernetes.io/kubelet-serving', usages: ['digital signature', 'server auth'], subject: { commonName: 'system:node:w', organizations: ['system:nodes'] } },
      'DNS or IP subjectAltName is required',
    ],
    [
      'the kubelet client signer refuses a subject outside system:nodes',
      { name: 'kubelet-client-wrong-org', signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'], subject: { commonName: 'system:node:w', organizations: ['devs'] } },
      'subject organization is not system:nodes',
    ],
    [
      'kube-apiserver-client refuses server auth',
      { name: 'client-server-auth', signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth', 'server auth'], subject: { commonName: 'bob' } },
      'invalid usage for client certificate: server auth',
    ],
  ];

  it.each(refused)('%s: Failed with SignerValidationFailure and the reason, no certificate', async (_t, c, message) => {
    expect((await createCsr(h, 'admin', c)).status).toBe(201);
    await approve(h, c.name);
    const csr = await waitFor('Failed', async () => {
      const got = await getCsr(h, c.name);
      return got.status?.conditions?.some((x) => x.type === 'Failed') ? got : undefined;
    });
    expect(csr.status?.conditions?.find((x) => x.type === 'Failed')).toMatchObject({ status: 'True', reason: 'SignerValidationFailure', message });
    expect(csr.status?.certificate ?? '').toBe('');
  });

  it('a signer whose CA files are missing retries instead of failing, and signs once they appear', async () => {
    const c: NewCsr = { name: 'late-ca', signerName: 'example.com/late', usages: ['digital signature', 'client auth'], subject: { commonName: 'late' } };
    expect((await createCsr(h, 'admin', c)).status).toBe(201);
    await approve(h, c.name);
    const counts = async (): Promise<number> => {
      const m = (await ctl.registry.getSingleMetric('controller_runtime_reconcile_errors_total')?.get())?.values ?? [];
      return m.find((v) => v.labels.controller === 'csrsigning-example-com-late')?.value ?? 0;
    };
    await waitFor('a few failed attempts', async () => ((await counts()) >= 2 ? true : undefined));
    const before = await getCsr(h, c.name);
    expect(before.status?.conditions?.map((x) => x.type)).toEqual(['Approved']);
    copyFileSync(path.join(h.caDir, 'custom.crt'), lateCa.certFile);
    copyFileSync(path.join(h.caDir, 'custom.key'), lateCa.keyFile);
    const done = await waitFor('issued after CA appeared', async () => {
      const got = await getCsr(h, c.name);
      return got.status?.certificate ? got : undefined;
    });
    expect(done.status?.conditions?.map((x) => x.type)).toEqual(['Approved']);
  });
});
