/**
 * The workload signer's start and its trust bundles beside another controller's, through the real
 * server and controllers:
 * - an API server that cannot be reached while the controller starts (its discovery of the served
 *   PodCertificateRequest version) is asked again with backoff, and requests are signed once it answers;
 * - two differently configured controllers (each its own Lease and namespace) publish their
 *   ClusterTrustBundles side by side: each deletes only bundles it published, for signers it stopped serving.
 */
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { classifyError } from '../../src/controller/client/errors.js';
import { clusterTrustBundleName } from '../../src/controller/revisions/cluster-trust-bundles.js';
import { createCertificateAuthority } from '../../src/pki/ca.js';
import { startController, startHarness, waitFor, type Harness, type RunningController } from './harness.js';
import { ecKey, PodWorld } from './pod-world.js';

const SIGNER = 'kube-identity.io/workload';
const OTHER = 'example.com/pods-b';
const CTBS = '/apis/certificates.k8s.io/v1beta1/clustertrustbundles';

let h: Harness;
let world: PodWorld;
const running: RunningController[] = [];
const workloadFiles = (): Record<string, string> => ({
  workloadSignerCertFile: path.join(h.caDir, 'workload.crt'),
  workloadSignerKeyFile: path.join(h.caDir, 'workload.key'),
});

/** A TCP front for the server that resets every connection until opened, then forwards them. */
async function gate(target: string): Promise<{ url: string; refused: () => number; open(): void; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  let open = false;
  let refused = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (!open) {
      refused++;
      socket.resetAndDestroy();
      return;
    }
    const upstream = net.connect(Number(port), hostname);
    sockets.add(upstream);
    upstream.on('error', () => socket.destroy());
    upstream.on('close', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    url: `https://127.0.0.1:${address.port}`,
    refused: () => refused,
    open: () => (open = true),
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** One revision pass of `c`; a 409 (its own start pass wrote meanwhile) means another pass. */
async function pass(c: RunningController): Promise<void> {
  await waitFor('a revision pass', async () => {
    try {
      await c.registered.revisions?.sync();
      return true;
    } catch (err) {
      if (classifyError(err) === 'conflict') return undefined;
      throw err;
    }
  });
}

async function bundleSigners(): Promise<string[]> {
  const res = await h.call('admin', 'GET', CTBS);
  return ((res.body.items ?? []) as { spec: { signerName: string } }[]).map((b) => b.spec.signerName).sort();
}

beforeAll(async () => {
  h = await startHarness();
  const ca = await createCertificateAuthority({ commonName: 'workload-ca' });
  writeFileSync(path.join(h.caDir, 'workload.crt'), ca.certPem);
  writeFileSync(path.join(h.caDir, 'workload.key'), ca.keyPem, { mode: 0o600 });
  world = new PodWorld(h);
  await world.setUp(['api']);
  await world.pod('api-0', 'api', [SIGNER]);
}, 60_000);

afterEach(async () => {
  for (const c of running.splice(0)) await c.stop();
});

afterAll(async () => {
  await h?.close();
});

it('keeps asking an API server it cannot reach at start, and signs once the server answers', async () => {
  const front = await gate(h.server.url);
  try {
    const starting = startController(h, { workloadSignerNames: SIGNER, ...workloadFiles() }, {}, undefined, front.url);
    // Before: the first refused discovery rejected the start. Now it is asked again, with backoff.
    await waitFor('a second attempt at discovery', async () => (front.refused() >= 2 ? true : undefined));
    front.open();
    running.push(await starting);
    const pcr = await world.answered(await world.requestFor('api-0', 'api', ecKey(), { signerName: SIGNER }));
    expect(pcr.status?.conditions?.map((c) => c.type)).toEqual(['Issued']);
    expect(new X509Certificate(pcr.status?.certificateChain ?? '').subjectAltName).toBe('URI:spiffe://cluster.local/ns/default/sa/api');
  } finally {
    for (const c of running.splice(0)) await c.stop();
    await front.close();
  }
}, 60_000);

it("leaves another controller's ClusterTrustBundles alone, and deletes its own once it stops serving the signer", async () => {
  // Passes run only when asked (and once at start): nothing recreates a deleted bundle behind the test's back.
  const slow = { caReloadInterval: '1h' };
  const csrSigners = { ...slow, clusterSigningCertFile: h.caFiles.certFile, clusterSigningKeyFile: h.caFiles.keyFile };
  const podSigners = {
    ...slow,
    leaderElectionNamespace: 'default',
    leaderElectionId: 'pod-signer',
    controllerNamespace: 'default',
    trustBundleNamespace: 'default',
    customSigners: `${OTHER}=${h.caFiles.certFile}:${h.caFiles.keyFile}`,
  };
  const a = await startController(h, csrSigners);
  running.push(a);
  const b = await startController(h, { ...podSigners, workloadSignerNames: SIGNER, ...workloadFiles() });
  running.push(b);
  const all = [
    'kubernetes.io/kube-apiserver-client',
    'kubernetes.io/kube-apiserver-client-kubelet',
    'kubernetes.io/kubelet-serving',
    'kubernetes.io/legacy-unknown',
    OTHER,
    SIGNER,
  ].sort();
  await waitFor('both controllers published', async () => ((await bundleSigners()).length === all.length ? true : undefined));
  // Each pass of each: before, either one deleted the other's bundles as stale.
  await pass(a);
  await pass(b);
  await pass(a);
  expect(await bundleSigners()).toEqual(all);
  const published = await h.call('admin', 'GET', `${CTBS}/${clusterTrustBundleName(SIGNER)}`);
  expect((published.body.metadata as { annotations?: Record<string, string> }).annotations?.['kube-identity.io/publisher']).toBe('default/pod-signer');

  // The same controller (its Lease) without the workload signer: that bundle goes, the rest stay.
  await b.stop();
  running.splice(running.indexOf(b), 1);
  const b2 = await startController(h, podSigners);
  running.push(b2);
  await waitFor('the workload bundle deleted', async () => (!(await bundleSigners()).includes(SIGNER) ? true : undefined));
  await pass(b2);
  await pass(a);
  expect(await bundleSigners()).toEqual(all.filter((s) => s !== SIGNER));
}, 60_000);
