/** Cleaner, signer revisions and trust bundle, and crash-safety of issuance, against the real server. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Watch } from '@kubernetes/client-node';
import type { CertificateSigningRequest } from '../../src/api/certificates.js';
import type { KObject } from '../../src/api/meta.js';
import { Cleaner } from '../../src/controller/cleaner/cleaner.js';
import { CsrApi } from '../../src/controller/csr/csr-api.js';
import { hasCertificate } from '../../src/controller/csr/csr-conditions.js';
import { FakeClock } from '../../src/lib/clock.js';
import { silentLogger } from '../../src/log/logger.js';
import { certificateDers } from '../../src/pki/certificate.js';
import { createCertificateAuthority } from '../../src/pki/ca.js';
import { approve, createCsr, getCsr, startController, startHarness, waitFor, type Harness, type RunningController } from './harness.js';

const HOUR = 3600_000;
const CLIENT = { signerName: 'kubernetes.io/kube-apiserver-client', usages: ['digital signature', 'client auth'] };

describe('lifecycle (real server, real controller)', () => {
  let h: Harness;
  let ctl: RunningController | undefined;
  const customFiles = { cert: '', key: '' };

  beforeAll(async () => {
    h = await startHarness();
    customFiles.cert = path.join(h.caDir, 'rot.crt');
    customFiles.key = path.join(h.caDir, 'rot.key');
    const ca = await createCertificateAuthority({ commonName: 'rotating-ca-1' });
    writeFileSync(customFiles.cert, ca.certPem);
    writeFileSync(customFiles.key, ca.keyPem);
  });
  afterAll(async () => {
    await ctl?.stop();
    await h?.close();
  });

  const start = (): Promise<RunningController> =>
    startController(h, {
      clusterSigningCertFile: h.caFiles.certFile,
      clusterSigningKeyFile: h.caFiles.keyFile,
      customSigners: `example.com/rotating=${customFiles.cert}:${customFiles.key}`,
      revisionHistoryLimit: '3',
    });

  it('killing a controller mid-run and running two at once never issues a second certificate', async () => {
    const names = Array.from({ length: 24 }, (_, i) => `crash-${i}`);
    for (const name of names) {
      expect((await createCsr(h, 'admin', { name, ...CLIENT, subject: { commonName: name } })).status).toBe(201);
    }
    const a = await start();
    const b = await start();
    // Every certificate value each CSR ever had, from a watch that sees every write.
    const seen = new Map<string, Set<string>>();
    const stopWatch = await new Watch(a.client.kubeConfig).watch(
      '/apis/certificates.k8s.io/v1/certificatesigningrequests',
      {},
      (_type: string, obj: CertificateSigningRequest) => {
        const cert = obj.status?.certificate;
        if (!cert) return;
        const set = seen.get(obj.metadata?.name ?? '') ?? new Set<string>();
        set.add(cert);
        seen.set(obj.metadata?.name ?? '', set);
      },
      () => {},
    );
    for (const name of names) await approve(h, name);
    await waitFor('first issuance', async () => (seen.size > 0 ? true : undefined));
    await a.stop(); // killed mid-run
    ctl = await start(); // and restarted, while b still runs
    await waitFor('all issued', async () => (seen.size === names.length ? true : undefined), 15_000);
    await b.stop();
    for (const name of names) {
      const csr = await getCsr(h, name);
      expect(seen.get(name)?.size).toBe(1);
      expect([...(seen.get(name) ?? [])][0]).toBe(csr.status?.certificate);
    }
    stopWatch.abort();
  });

  it('the cleaner deletes exactly the CSRs past their deadline, by a fake clock', async () => {
    const c = ctl as RunningController;
    await createCsr(h, 'admin', { name: 'gc-pending', ...CLIENT, subject: { commonName: 'p' } });
    await createCsr(h, 'admin', { name: 'gc-issued', ...CLIENT, subject: { commonName: 'i' } });
    await approve(h, 'gc-issued');
    await createCsr(h, 'admin', { name: 'gc-unissued', signerName: 'example.com/nobody', usages: CLIENT.usages, subject: { commonName: 'u' } });
    await approve(h, 'gc-unissued');
    await createCsr(h, 'admin', { name: 'gc-failed', ...CLIENT, usages: ['server auth'], subject: { commonName: 'f' } });
    await approve(h, 'gc-failed');
    await createCsr(h, 'admin', { name: 'gc-denied', ...CLIENT, subject: { commonName: 'd' } });
    const d = await getCsr(h, 'gc-denied');
    const denied = { ...d, status: { conditions: [{ type: 'Denied', status: 'True', reason: 'KubectlDeny', message: 'This CSR was denied by kubectl certificate deny.' }] } };
    expect((await h.call('admin', 'PUT', '/apis/certificates.k8s.io/v1/certificatesigningrequests/gc-denied/approval', denied)).status).toBe(200);
    const store = c.registered.csrInformer.store;
    await waitFor('cache caught up', async () => {
      const cachedIssued = store.get('gc-issued');
      const issued = cachedIssued && hasCertificate(cachedIssued);
      const failed = store.get('gc-failed')?.status?.conditions?.some((x) => x.type === 'Failed');
      const den = store.get('gc-denied')?.status?.conditions?.length;
      return issued && failed && den ? true : undefined;
    });
    const others = new Set(store.keys().filter((k) => !k.startsWith('gc-')));
    const clock = new FakeClock(Date.now() + 2 * HOUR);
    const cleaner = new Cleaner({ api: new CsrApi(c.client), csrs: store, clock, logger: silentLogger() });
    const first = await cleaner.runOnce();
    // The crash-* CSRs were issued too, over an hour ago by this clock: they go as well.
    expect(first.filter((x) => x.name.startsWith('gc-')).map((x) => `${x.name}:${x.reason}`).sort()).toEqual(['gc-denied:denied', 'gc-failed:failed', 'gc-issued:issued']);
    expect(first.filter((x) => !x.name.startsWith('gc-')).every((x) => others.has(x.name) && x.reason === 'issued')).toBe(true);
    expect((await h.call('admin', 'GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests/gc-issued')).status).toBe(404);
    clock.advance(23 * HOUR);
    await waitFor('cache saw the deletes', async () => (store.get('gc-issued') ? undefined : true));
    expect((await cleaner.runOnce()).map((x) => `${x.name}:${x.reason}`)).toEqual(['gc-pending:pending']);
    // Approved but never issued: never collected (as upstream).
    expect((await getCsr(h, 'gc-unissued')).metadata?.name).toBe('gc-unissued');
  });

  it('a rotated CA file produces the next ControllerRevision and bundles (ConfigMap, ClusterTrustBundle) with both CAs', async () => {
    const list = async (): Promise<KObject[]> =>
      (await h.call('admin', 'GET', '/apis/apps/v1/namespaces/kube-system/controllerrevisions?labelSelector=kube-identity.io%2Fcontroller%3Dcsrsigning')).body
        .items as KObject[];
    const bundle = async (): Promise<Record<string, string> | undefined> => {
      const res = await h.call('admin', 'GET', '/api/v1/namespaces/kube-system/configmaps/kube-identity-trust-bundle');
      return res.status === 200 ? (res.body.data as Record<string, string>) : undefined;
    };
    const ctbs = async (): Promise<KObject[]> =>
      (await h.call('admin', 'GET', '/apis/certificates.k8s.io/v1beta1/clustertrustbundles')).body.items as KObject[];
    const rotatingCtb = async (): Promise<{ signerName: string; trustBundle: string } | undefined> => {
      const res = await h.call('admin', 'GET', '/apis/certificates.k8s.io/v1beta1/clustertrustbundles/example.com:rotating:kube-identity');
      return res.status === 200 ? (res.body.spec as { signerName: string; trustBundle: string }) : undefined;
    };
    const first = await waitFor('a revision', async () => ((await list()).length > 0 ? await list() : undefined));
    const top = Math.max(...first.map((r) => r.revision as number));
    const before = await waitFor('a bundle', bundle);
    expect(Object.keys(before).sort()).toEqual([
      'example.com_rotating.crt',
      'kubernetes.io_kube-apiserver-client-kubelet.crt',
      'kubernetes.io_kube-apiserver-client.crt',
      'kubernetes.io_kubelet-serving.crt',
      // The shared pair signs legacy-unknown too, as kube-controller-manager's does.
      'kubernetes.io_legacy-unknown.crt',
    ]);
    expect(certificateDers(before['example.com_rotating.crt'] ?? '')).toHaveLength(1);
    // One ClusterTrustBundle per signer, named by upstream's rule, with the same CAs as the ConfigMap.
    const published = await waitFor('cluster trust bundles', async () => ((await ctbs()).length === 5 ? await ctbs() : undefined));
    expect(published.map((b) => `${b.metadata?.name} ${(b.spec as { signerName: string }).signerName}`).sort()).toEqual([
      'example.com:rotating:kube-identity example.com/rotating',
      'kubernetes.io:kube-apiserver-client-kubelet:kube-identity kubernetes.io/kube-apiserver-client-kubelet',
      'kubernetes.io:kube-apiserver-client:kube-identity kubernetes.io/kube-apiserver-client',
      'kubernetes.io:kubelet-serving:kube-identity kubernetes.io/kubelet-serving',
      'kubernetes.io:legacy-unknown:kube-identity kubernetes.io/legacy-unknown',
    ]);
    const oldCa = before['example.com_rotating.crt'] ?? '';
    expect((await rotatingCtb())?.trustBundle).toBe(oldCa);
    const next = await createCertificateAuthority({ commonName: 'rotating-ca-2' });
    writeFileSync(customFiles.key, next.keyPem);
    writeFileSync(customFiles.cert, next.certPem);
    const after = await waitFor('next revision', async () => {
      const revs = await list();
      return revs.some((r) => r.revision === top + 1) ? revs : undefined;
    });
    const newest = after.find((r) => r.revision === top + 1) as KObject;
    expect(newest.metadata?.name).toMatch(/^kube-identity-signers-[0-9a-f]{10}$/);
    const rec = (newest.data as { signers: { signerName: string; caCertificate: string }[] }).signers.find((s) => s.signerName === 'example.com/rotating');
    expect(rec?.caCertificate.trim()).toBe(next.certPem.trim());
    const data = await waitFor('bundle with both CAs', async () => {
      const b = await bundle();
      return b && certificateDers(b['example.com_rotating.crt'] ?? '').length === 2 ? b : undefined;
    });
    expect((data['example.com_rotating.crt'] ?? '').indexOf(next.certPem.trim())).toBe(0);
    // The ClusterTrustBundle carries the new CA beside the old one for the overlap.
    const rotated = await waitFor('cluster trust bundle with both CAs', async () => {
      const b = await rotatingCtb();
      return b && certificateDers(b.trustBundle).length === 2 ? b : undefined;
    });
    expect(rotated.signerName).toBe('example.com/rotating');
    expect(rotated.trustBundle.indexOf(next.certPem.trim())).toBe(0);
    expect(rotated.trustBundle).toContain(oldCa.trim());
    const list2 = await list();
    expect(list2.length).toBeLessThanOrEqual(3);
  });
});
