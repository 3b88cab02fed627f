/**
 * `up`'s controller on a thread of its own (src/cmd/controller-thread.ts), against a real embedded API
 * server on this (jest's) main thread, as `up` arranges them: the controller keeps serving while the
 * server's thread is blocked, issues certificates, stops cleanly with its Lease released, and a
 * controller that fails ends its thread and says why instead of leaving it half alive.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { SIGNER_KUBE_APISERVER_CLIENT_KUBELET } from '../../src/api/certificates.js';
import { controllerKubeConfig } from '../../src/cmd/controller-identity.js';
import { startControllerThread, type ControllerThread } from '../../src/cmd/controller-thread.js';
import { loadControllerConfig } from '../../src/config/load.js';
import type { ControllerConfig } from '../../src/config/schema.js';
import { createCertificateRequestPem } from '../../src/pki/csr.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { until, waitFor } from '../helpers/wait.js';

let s: TestServer;
let dir: string;

beforeAll(async () => {
  s = await startTestServer();
  dir = s.dataDir;
});
afterAll(async () => {
  await s.close();
});

/** The controller as up configures it (the client signers on the cluster CA, elected), on `metrics`. */
function upControllerConfig(metricsBindAddress = '127.0.0.1:0', election: Record<string, string> = {}): Promise<ControllerConfig> {
  return loadControllerConfig({
    flags: {
      kubeconfig: path.join(dir, 'kubeconfig'),
      clusterSigningKubeletClientCertFile: path.join(dir, 'ca.crt'),
      clusterSigningKubeletClientKeyFile: path.join(dir, 'ca.key'),
      clusterSigningKubeApiserverClientCertFile: path.join(dir, 'ca.crt'),
      clusterSigningKubeApiserverClientKeyFile: path.join(dir, 'ca.key'),
      clusterSigningKubeletServingCertFile: path.join(dir, 'kubelet-serving-ca.crt'),
      clusterSigningKubeletServingKeyFile: path.join(dir, 'kubelet-serving-ca.key'),
      leaderElect: true,
      metricsBindAddress,
      logLevel: 'info',
      ...election,
    },
    env: {},
  });
}

async function start(
  config: ControllerConfig,
  logFile = path.join(dir, 'controller.log'),
): Promise<{ thread: ControllerThread; metricsUrl: Promise<string>; listened: string[] }> {
  const kubeConfig = await controllerKubeConfig(s.url, { certPem: s.caPem, keyPem: readFileSync(path.join(dir, 'ca.key'), 'utf8') });
  let listening: (url: string) => void = () => undefined;
  const metricsUrl = new Promise<string>((resolve) => (listening = resolve));
  const listened: string[] = [];
  const onListening = (url: string): void => {
    listened.push(url);
    listening(url);
  };
  const thread = startControllerThread({ config, logFile });
  thread.run(kubeConfig, onListening);
  return { thread, metricsUrl, listened };
}

/** This process's threads by their names (/proc/self/task/TID/comm). */
function threads(): { tid: number; name: string }[] {
  return readdirSync('/proc/self/task').map((tid) => ({ tid: Number(tid), name: readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() }));
}

const holder = async (): Promise<string | undefined> =>
  ((await raw(s, 'GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-identity-controller')).json as { spec?: { holderIdentity?: string } }).spec?.holderIdentity;

it('runs beside the API server on a thread of its own: it serves /metrics while the server\'s thread is blocked, and issues', async () => {
  const { thread, metricsUrl } = await start(await upControllerConfig());
  try {
    const url = await metricsUrl;
    expect(thread.threadId).toBeGreaterThan(0);
    const named = threads().filter((t) => t.name === 'controller');
    expect(named).toHaveLength(1);
    expect(named[0]?.tid).not.toBe(process.pid);

    // A kubelet's client CSR: the controller approves it (the requester may create nodeclient CSRs) and signs it.
    const request = await createCertificateRequestPem({ privateKeyPem: generateKeyPair().privateKeyPem, commonName: 'system:node:thread-node', organizations: ['system:nodes'] });
    const created = await raw(s, 'POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
      body: { metadata: { name: 'thread-node' }, spec: { request: Buffer.from(request).toString('base64'), signerName: SIGNER_KUBE_APISERVER_CLIENT_KUBELET, usages: ['digital signature', 'client auth'] } },
    });
    expect(created.status).toBe(201);
    await waitFor('the CSR to be issued', async () => {
      const csr = (await raw(s, 'GET', '/apis/certificates.k8s.io/v1/certificatesigningrequests/thread-node')).json as { status?: { certificate?: string } };
      return csr.status?.certificate;
    }, 20_000);

    // execFileSync blocks this thread (the API server's) until curl has its answer: only another thread can give it.
    const stdout = execFileSync('curl', ['-sS', '--max-time', '20', `${url}/metrics`], { encoding: 'utf8' });
    expect(stdout).toMatch(/^kube_identity_csr_issuances_total\{signer="kubernetes.io\/kube-apiserver-client-kubelet"\} 1$/m);
  } finally {
    thread.stop();
    await thread.done;
  }
}, 60_000);

it('stops when asked: in-flight work ends, its Lease is released, the thread is gone, its lines are in the log file', async () => {
  const logFile = path.join(dir, 'stop.log');
  const { thread, metricsUrl } = await start(await upControllerConfig(), logFile);
  await metricsUrl;
  await until('the thread to lead', async () => (await holder()) !== undefined && (await holder()) !== '', 20_000);
  thread.stop();
  await thread.done;
  expect(await holder()).toBe('');
  expect(threads().filter((t) => t.name === 'controller')).toEqual([]);
  const lines = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { logger?: string; msg: string });
  expect(lines.every((l) => l.logger === 'controller')).toBe(true);
  expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['starting kube-identity controller', 'released lease']));
}, 60_000);

it('campaigns again after losing its election, as up always has: the thread lives on and leads once the Lease is free', async () => {
  const logFile = path.join(dir, 'election.log');
  const election = { leaderElectionLeaseDuration: '4s', leaderElectionRenewDeadline: '3s', leaderElectionRetryPeriod: '500ms' };
  const { thread, listened } = await start(await upControllerConfig('127.0.0.1:0', election), logFile);
  let settled = false;
  void thread.done.then(
    () => (settled = true),
    () => (settled = true),
  );
  try {
    await until('the thread to lead', async () => ((await holder()) ?? '') !== '', 20_000);
    // Someone else takes the Lease, as a second controller would after a partition.
    const LEASE = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-identity-controller';
    const lease = (await raw(s, 'GET', LEASE)).json as { spec: Record<string, unknown> };
    const now = new Date().toISOString().replace('Z', '000Z');
    const taken = await raw(s, 'PUT', LEASE, { body: { ...lease, spec: { ...lease.spec, holderIdentity: 'someone-else', leaseDurationSeconds: 6, renewTime: now, acquireTime: now } } });
    expect(taken.status).toBe(200);
    await until('the lost election in the log', () => readFileSync(logFile, 'utf8').includes('"msg":"controller lost its leader election: campaigning again"'), 20_000);
    expect(settled).toBe(false);
    // A fresh run (a fresh candidate, as a restarted pod: a new identity): its probe server listens
    // again, and it takes the Lease once someone-else's expires.
    await until('the probe server to listen again', () => listened.length === 2, 20_000);
    await until('the thread to lead again', async () => !['someone-else', '', undefined].includes(await holder()), 30_000);
    expect(settled).toBe(false);
  } finally {
    thread.stop();
    await thread.done;
  }
}, 90_000);

it('ends cleanly when stopped before it ran, as when the API server fails to start', async () => {
  const thread = startControllerThread({ config: await upControllerConfig(), logFile: path.join(dir, 'unused.log') });
  thread.stop();
  await thread.done;
  expect(threads().filter((t) => t.name === 'controller')).toEqual([]);
  expect(readdirSync(dir)).not.toContain('unused.log');
}, 60_000);

it('a controller that fails ends its thread, and `done` says why in words up can explain', async () => {
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as net.AddressInfo).port;
  try {
    const { thread } = await start(await upControllerConfig(`127.0.0.1:${port}`));
    await expect(thread.done).rejects.toMatchObject({ code: 'EADDRINUSE', address: '127.0.0.1', port });
    expect(threads().filter((t) => t.name === 'controller')).toEqual([]);
  } finally {
    taken.close();
  }
}, 60_000);

it('a thread that dies on an exception nothing caught is reported too, not left for dead', async () => {
  // Its log file cannot be opened: the thread throws before its controller starts.
  const { thread } = await start(await upControllerConfig(), path.join(dir, 'no-such-dir', 'controller.log'));
  await expect(thread.done).rejects.toMatchObject({ code: 'ENOENT' });
  expect(threads().filter((t) => t.name === 'controller')).toEqual([]);
}, 60_000);
