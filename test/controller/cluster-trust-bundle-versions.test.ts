/**
 * Publishing ClusterTrustBundles on a cluster older than 1.37, where v1 is not served: the publisher
 * lists and writes through the newest version the server answers (v1beta1 on 1.33-1.36, v1alpha1
 * before), and skips publishing when none is served. A scripted API server stands in for such a
 * cluster; ours serves every version.
 */
import { realClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/log/logger.js';
import { KubeClient } from '../../src/controller/client/kube-client.js';
import { publishClusterTrustBundles } from '../../src/controller/revisions/cluster-trust-bundles.js';
import { FakeApiServer, json } from './fake-apiserver.js';

const notFound = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 };
const SIGNER = 'example.com/rotating';
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

let fake: FakeApiServer;
let client: KubeClient;
const quiet = createLogger({ level: 'silent' });

beforeEach(async () => {
  fake = await FakeApiServer.start();
  client = new KubeClient({ kubeConfig: fake.tokenKubeConfig('t'), clock: realClock });
});

afterEach(async () => {
  client.close();
  await fake.close();
});

/** A server that serves ClusterTrustBundles only in `version`, with none published yet. */
function servesOnly(version: string): void {
  const collection = `/apis/certificates.k8s.io/${version}/clustertrustbundles`;
  fake.handler = (req, res, seen) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== collection) return json(res, 404, notFound);
    if (req.method === 'GET') return json(res, 200, { kind: 'ClusterTrustBundleList', apiVersion: `certificates.k8s.io/${version}`, metadata: {}, items: [] });
    json(res, 201, JSON.parse(seen.body) as unknown);
  };
}

it.each(['v1beta1', 'v1alpha1'])('writes through %s when the server serves no newer version', async (version) => {
  servesOnly(version);
  await publishClusterTrustBundles(client, new Map([[SIGNER, PEM]]), 'kube-system/kube-identity', quiet);
  const post = fake.seen.find((s) => s.method === 'POST');
  expect(post?.url).toBe(`/apis/certificates.k8s.io/${version}/clustertrustbundles`);
  expect(JSON.parse(post?.body ?? '{}')).toMatchObject({
    apiVersion: `certificates.k8s.io/${version}`,
    kind: 'ClusterTrustBundle',
    metadata: { name: 'example.com:rotating:kube-identity', annotations: { 'kube-identity.io/publisher': 'kube-system/kube-identity' } },
    spec: { signerName: SIGNER, trustBundle: PEM },
  });
});

it('asks v1 first and publishes nothing when no version is served', async () => {
  fake.handler = (_req, res) => json(res, 404, notFound);
  await publishClusterTrustBundles(client, new Map([[SIGNER, PEM]]), 'kube-system/kube-identity', quiet);
  expect(fake.seen.map((s) => `${s.method} ${(s.url).split('?')[0]}`)).toEqual([
    'GET /apis/certificates.k8s.io/v1/clustertrustbundles',
    'GET /apis/certificates.k8s.io/v1beta1/clustertrustbundles',
    'GET /apis/certificates.k8s.io/v1alpha1/clustertrustbundles',
  ]);
});
