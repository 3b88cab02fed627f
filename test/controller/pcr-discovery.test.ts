/**
 * The workload signer's start-up discovery against an HTTPS server that answers as a scripted API
 * server would: 404 for both PodCertificateRequest versions means not served (one warn, no retry);
 * failures are asked again with backoff, logged with constant messages, until an answer or the stop.
 */
import { realClock } from '../../src/lib/clock.js';
import { JitteredBackoff } from '../../src/lib/backoff.js';
import { createLogger } from '../../src/log/logger.js';
import { KubeClient } from '../../src/controller/client/kube-client.js';
import { REFUSED_MESSAGE } from '../../src/controller/client/errors.js';
import { servedPodCertificateVersion } from '../../src/controller/register-workload.js';
import { FakeApiServer, json } from './fake-apiserver.js';
import { waitFor } from './helpers.js';

const V1 = '/apis/certificates.k8s.io/v1';
const V1BETA1 = '/apis/certificates.k8s.io/v1beta1';
const notFound = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 };
const served = (version: string) => ({ kind: 'APIResourceList', groupVersion: `certificates.k8s.io/${version}`, resources: [{ name: 'podcertificaterequests', namespaced: true }] });

let fake: FakeApiServer;
let client: KubeClient;
let lines: { level: number; msg: string }[];
const logger = () =>
  createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) } });
const fast = () => new JitteredBackoff({ initialMs: 5, maxMs: 20 });

beforeEach(async () => {
  fake = await FakeApiServer.start();
  client = new KubeClient({ kubeConfig: fake.tokenKubeConfig('t'), clock: realClock });
  lines = [];
});

afterEach(async () => {
  client.close();
  await fake.close();
});

it('takes 404 for both versions as not served: one warn, asked once each', async () => {
  fake.handler = (_req, res) => json(res, 404, notFound);
  await expect(servedPodCertificateVersion(client, logger(), { clock: realClock, backoff: fast() })).resolves.toBeUndefined();
  expect(fake.seen.map((s) => s.url)).toEqual([V1, V1BETA1]);
  expect(lines.map((l) => [l.level, l.msg])).toEqual([[40, 'PodCertificateRequests not served: the workload signer and the PodCertificateRequest cleaner stay off']]);
});

it('asks again after failures until the server answers, then reads the version it serves', async () => {
  let failures = 2;
  fake.handler = (req, res) => {
    if (failures-- > 0) return json(res, 503, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'ServiceUnavailable', code: 503 });
    json(res, req.url === V1BETA1 ? 200 : 404, req.url === V1BETA1 ? served('v1beta1') : notFound);
  };
  await expect(servedPodCertificateVersion(client, logger(), { clock: realClock, backoff: fast() })).resolves.toBe('v1beta1');
  expect(fake.seen.map((s) => s.url)).toEqual([V1, V1, V1, V1BETA1]);
  expect(lines.map((l) => l.msg)).toEqual(['PodCertificateRequest discovery failed, retrying', 'PodCertificateRequest discovery failed, retrying']);
});

it('logs refused credentials as an error, keeps asking, and ends when stopped', async () => {
  fake.handler = (_req, res) => json(res, 403, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403 });
  const stop = new AbortController();
  const discovering = servedPodCertificateVersion(client, logger(), { clock: realClock, signal: stop.signal, backoff: fast() });
  await waitFor('two attempts', () => fake.seen.length >= 2);
  stop.abort();
  await expect(discovering).resolves.toBeUndefined();
  expect(new Set(lines.map((l) => [l.level, l.msg].join(' ')))).toEqual(new Set([`50 ${REFUSED_MESSAGE}`]));
});
