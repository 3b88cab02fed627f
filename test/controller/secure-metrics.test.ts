/**
 * The controller's --metrics-secure against the real embedded API server, as controller-runtime's
 * WithAuthenticationAndAuthorization: HTTPS (self-signed, or the pair in --metrics-cert-path, re-read
 * when it changes, with the TLS options of the API server), and /metrics only for a token the API
 * server authenticates (TokenReview) whose user may `get` /metrics (SubjectAccessReview): anonymous
 * 401, a token without the role 403, with it 200. The probes stay open. Reviews are cached briefly.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { Registry } from 'prom-client';
import { loadControllerConfig } from '../../src/config/load.js';
import { runController } from '../../src/controller/run-controller.js';
import { silentLogger } from '../../src/log/logger.js';
import type { ProbeServer } from '../../src/metrics/http.js';
import { selfSignedServingPair } from '../../src/pki/self-signed.js';
import { raw } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { waitFor } from './helpers.js';

/** GET over HTTPS without verifying the (self-signed) certificate; returns status, body and the served certificate. */
function get(url: string, token?: string): Promise<{ status: number; body: string; cert: X509Certificate }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { rejectUnauthorized: false, agent: false, headers: token ? { Authorization: `Bearer ${token}` } : {} }, (res) => {
      const cert = new X509Certificate((res.socket as tls.TLSSocket).getPeerCertificate().raw);
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, cert }));
    });
    req.on('error', reject);
  });
}

/** How many TokenReviews the API server has answered (its own apiserver_request_total). */
async function tokenReviews(server: TestServer): Promise<number> {
  const text = (await raw(server, 'GET', '/metrics')).text;
  return [...text.matchAll(/^apiserver_request_total\{[^}]*resource="tokenreviews"[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

describe('controller --metrics-secure', () => {
  let server: TestServer;
  const stops: (() => Promise<void>)[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ storage: 'memory', tokenFile: 'reader-token,prometheus,prometheus-uid\nnobody-token,nobody,nobody-uid\n' });
    // The chart's metrics-reader ClusterRole, bound to the scraper.
    const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'metrics-reader' }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] };
    expect((await raw(server, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: role })).status).toBe(201);
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'prometheus-metrics-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'metrics-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'prometheus' }],
    };
    expect((await raw(server, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { body: binding })).status).toBe(201);
  });
  afterAll(async () => {
    for (const stop of stops) await stop();
    await server.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const start = async (flags: Record<string, string>): Promise<string> => {
    const config = await loadControllerConfig({ flags: { metricsBindAddress: '127.0.0.1:0', metricsSecure: 'true', leaderElect: 'false', ...flags }, env: {} });
    const abort = new AbortController();
    let probe: ProbeServer | undefined;
    const run = runController(config, {
      logger: silentLogger(),
      registry: new Registry(),
      kubeConfig: server.kubeConfig,
      signal: abort.signal,
      hostname: 'test-host',
      onListening: (s) => (probe = s),
      // A manager with nothing to run would return at once and close the server.
      register: (mgr) =>
        mgr.add({ name: 'idle', needLeaderElection: true, start: (signal) => new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true })) }),
    });
    stops.push(async () => {
      abort.abort();
      await run;
    });
    await waitFor('metrics server', () => probe !== undefined);
    return (probe as ProbeServer).url;
  };

  it('answers 401 without a token or with a bad one, 403 without the role and 200 with it; probes stay open', async () => {
    const url = await start({});
    expect(url).toMatch(/^https:\/\//);
    expect((await get(`${url}/metrics`)).status).toBe(401);
    expect((await get(`${url}/metrics`, 'not-a-token')).status).toBe(401);
    const denied = await get(`${url}/metrics`, 'nobody-token');
    expect([denied.status, denied.body]).toEqual([403, 'Authorization denied for user nobody\n']);
    const allowed = await get(`${url}/metrics`, 'reader-token');
    expect(allowed.status).toBe(200);
    expect(allowed.body).toMatch(/^process_cpu_seconds_total /m);
    // Self-signed for the host, as controller-runtime makes one.
    expect(allowed.cert.subjectAltName).toContain('DNS:test-host');
    for (const p of ['/healthz', '/readyz']) expect((await get(`${url}${p}`)).status).toBe(200);
  });

  it('caches the reviews briefly: repeated scrapes cost one TokenReview', async () => {
    const url = await start({});
    const before = await tokenReviews(server);
    for (let i = 0; i < 5; i++) expect((await get(`${url}/metrics`, 'reader-token')).status).toBe(200);
    expect((await tokenReviews(server)) - before).toBe(1);
  });

  it('serves the pair in --metrics-cert-path, re-read when it changes, with the TLS options', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-metrics-certs-'));
    dirs.push(dir);
    const first = await selfSignedServingPair('first', ['127.0.0.1']);
    writeFileSync(path.join(dir, 'tls.crt'), first.certPem);
    writeFileSync(path.join(dir, 'tls.key'), first.keyPem);
    const url = await start({ metricsCertPath: dir, tlsCipherSuites: 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384' });
    expect((await get(`${url}/healthz`)).cert.serialNumber).toBe(new X509Certificate(first.certPem).serialNumber);

    const second = await selfSignedServingPair('second', ['127.0.0.1']);
    writeFileSync(path.join(dir, 'tls.key.tmp'), second.keyPem);
    writeFileSync(path.join(dir, 'tls.crt.tmp'), second.certPem);
    renameSync(path.join(dir, 'tls.key.tmp'), path.join(dir, 'tls.key'));
    renameSync(path.join(dir, 'tls.crt.tmp'), path.join(dir, 'tls.crt'));
    const serial = new X509Certificate(second.certPem).serialNumber;
    await waitFor('the new pair', async () => (await get(`${url}/healthz`)).cert.serialNumber === serial, 10_000);

    const port = new URL(url).port;
    const handshake = (cipher: string): Promise<boolean> =>
      new Promise((resolve) => {
        const child = execFile('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-tls1_2', '-cipher', cipher], { timeout: 10_000 }, (err) => resolve(!err));
        child.stdin?.end();
      });
    expect(await handshake('ECDHE-ECDSA-AES256-GCM-SHA384')).toBe(true);
    expect(await handshake('ECDHE-ECDSA-AES128-GCM-SHA256')).toBe(false);
    expect(await handshake('ECDHE-ECDSA-AES128-CCM')).toBe(false);
  });
});
