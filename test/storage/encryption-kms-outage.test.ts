/**
 * A KMS v2 plugin that goes down, through the real server: /readyz fails with upstream's
 * `[-]kms-providers` and /readyz/kms-providers says why; Secrets whose seed is known still read (as
 * upstream), Secret writes get 503 with a Status once the seed's write validity lapses (upstream's
 * 3 minutes, shortened here), other resources are unaffected, and everything recovers by itself
 * when the plugin is back. A server restarted while the plugin is down (SQLite and etcd) starts and
 * answers 503 for Secret reads, lists, watches and writes too (no seed known yet), serves everything
 * else, then recovers; on SQLite the stored values are left byte for byte as they were. Never a 500.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedServer, type EmbeddedServer, type EmbeddedServerOptions } from '../../src/apiserver/server/embedded.js';
import type { KmsTimings } from '../../src/apiserver/encryption/kms-envelope.js';
import { silentLogger } from '../../src/log/logger.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { openWatch, raw, type RawResponse } from '../helpers/http.js';
import { startKmsPlugin, type TestKmsPlugin } from '../helpers/kms-plugin.js';
import { sqliteRows } from '../helpers/sqlite-rows.js';
import { describeWithTools } from '../helpers/tools.js';
import { waitFor as poll } from '../helpers/wait.js';

// The write validity outlasts a loaded host's stalls (1.5 s did not: a write right after the start got
// 503 under the full suite), and the refusal after the outage is waited for, never timed.
const TIMINGS: KmsTimings = { healthyIntervalMs: 300, failingIntervalMs: 200, writeValidityMs: 4000, cacheTtlMs: 86_400_000 };

/** The shared poll, with this suite's 15 s budget (servers started from source under load). */
const waitFor = <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => poll(what, probe, 15_000);

function call(server: EmbeddedServer) {
  const target = { url: server.url, caPem: server.credentials.caPem, admin: { certPem: server.credentials.adminCertPem, keyPem: server.credentials.adminKeyPem } };
  return (method: string, p: string, body?: unknown): Promise<RawResponse> => raw(target, method, p, { body });
}

const secret = (name: string) => ({ metadata: { name }, stringData: { password: `pw-${name}` } });

function expect503(res: RawResponse): void {
  expect(res.status).toBe(503);
  expect(res.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'ServiceUnavailable', code: 503 });
  expect(res.json.message).toContain('KMS provider test-kms');
}

async function setUp(dir: string, extra: Partial<EmbeddedServerOptions> = {}): Promise<{ kms: TestKmsPlugin; opts: EmbeddedServerOptions }> {
  const kms = await startKmsPlugin(path.join(dir, 'kms.sock'));
  const config = path.join(dir, 'encryption.yaml');
  writeFileSync(
    config,
    `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - kms: { apiVersion: v2, name: test-kms, endpoint: '${kms.endpoint}', timeout: 1s }
      - identity: {}
`,
  );
  return { kms, opts: { dataDir: path.join(dir, 'data'), logger: silentLogger(), port: 0, encryptionProviderConfig: config, kmsTimings: TIMINGS, ...extra } };
}

describe('a KMS v2 plugin that goes down (SQLite)', () => {
  let dir: string;
  let kms: TestKmsPlugin;
  let server: EmbeddedServer;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kms-outage-'));
    const set = await setUp(dir);
    kms = set.kms;
    server = await startEmbeddedServer(set.opts);
  });
  afterAll(async () => {
    await server?.close();
    await kms?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails readiness with kms-providers, keeps reads, refuses Secret writes with 503, and recovers by itself', async () => {
    const api = call(server);
    expect((await api('POST', '/api/v1/namespaces/default/secrets', secret('before'))).status).toBe(201);
    expect((await api('GET', '/readyz/kms-providers')).text).toBe('ok');
    // Upstream's envelope metrics: the plugin's calls, the seed made once, the key ID used (hashed).
    const keyIdHash = `sha256:${createHash('sha256').update('key-1').digest('hex')}`;
    let metrics = (await api('GET', '/metrics')).text;
    expect(metrics).toMatch(/^apiserver_envelope_encryption_kms_operations_latency_seconds_count\{provider_name="test-kms",method_name="\/v2.KeyManagementService\/Encrypt",grpc_status_code="OK"\} 1$/m);
    expect(metrics).toMatch(/^apiserver_envelope_encryption_kms_operations_latency_seconds_count\{provider_name="test-kms",method_name="\/v2.KeyManagementService\/Status",grpc_status_code="OK"\} [1-9]/m);
    expect(metrics).toMatch(new RegExp(`^apiserver_envelope_encryption_key_id_hash_total\\{transformation_type="to_storage",provider_name="test-kms",key_id_hash="${keyIdHash}",apiserver_id_hash="sha256:[0-9a-f]{64}"\\} 1$`, 'm'));
    expect(metrics).toMatch(new RegExp(`^apiserver_envelope_encryption_key_id_hash_status_last_timestamp_seconds\\{provider_name="test-kms",key_id_hash="${keyIdHash}",apiserver_id_hash="sha256:[0-9a-f]{64}"\\} \\d`, 'm'));
    expect(metrics).toMatch(/^apiserver_storage_data_key_generation_duration_seconds_count 1$/m);
    expect(metrics).toMatch(/^apiserver_envelope_encryption_dek_source_cache_size\{provider_name="test-kms"\} 1$/m);
    expect(metrics).not.toContain('key-1');

    await kms.stop();
    const ready = await waitFor('readyz to fail', async () => {
      const r = await api('GET', '/readyz');
      return r.status === 500 ? r : undefined;
    });
    expect(ready.text).toContain('[-]kms-providers failed: reason withheld');
    const named = await api('GET', '/readyz/kms-providers');
    expect(named.status).toBe(500);
    expect(named.text).toMatch(/^internal server error: failed to perform status section of the healthz check for KMS Provider test-kms, error: KMS provider test-kms Status failed/);

    // The seed is known: reads go on, as upstream's.
    const read = await api('GET', '/api/v1/namespaces/default/secrets/before');
    expect([read.status, Buffer.from(read.json.data.password, 'base64').toString()]).toEqual([200, 'pw-before']);
    // Once the seed's write validity has lapsed without a healthy Status, Secret writes are refused.
    const refused = await waitFor('a Secret write to be refused', async () => {
      const r = await api('POST', '/api/v1/namespaces/default/secrets', secret(`during-${Date.now()}`));
      return r.status === 201 ? undefined : r;
    });
    expect503(refused);
    expect503(await api('PUT', '/api/v1/namespaces/default/secrets/before', { ...secret('before'), stringData: { password: 'changed' } }));
    // Resources the configuration does not encrypt are not affected.
    expect((await api('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'cm' }, data: { a: 'b' } })).status).toBe(201);
    metrics = (await api('GET', '/metrics')).text;
    expect(metrics).toMatch(/apiserver_storage_transformation_operations_total\{transformation_type="to_storage",transformer_prefix="k8s:enc:kms:v2:test-kms:",status="Unavailable"\} [1-9]/);
    expect(metrics).toMatch(/^apiserver_envelope_encryption_kms_operations_latency_seconds_count\{provider_name="test-kms",method_name="\/v2.KeyManagementService\/Status",grpc_status_code="Unavailable"\} [1-9]/m);

    await kms.start();
    await waitFor('readyz to pass', async () => ((await api('GET', '/readyz')).status === 200 ? true : undefined));
    expect((await api('POST', '/api/v1/namespaces/default/secrets', secret('after'))).status).toBe(201);
    expect((await api('GET', '/api/v1/namespaces/default/secrets/after')).status).toBe(200);

    // A plugin whose Status gives no key ID is counted as upstream counts it.
    kms.rotate('');
    await waitFor('the empty key ID to be counted', async () =>
      /^apiserver_envelope_encryption_invalid_key_id_from_status_total\{provider_name="test-kms",error="empty"\} [1-9]/m.test((await api('GET', '/metrics')).text) ? true : undefined,
    );
  }, 60_000);
});

/** Every stored row of a Secret (revision, key, the bytes as stored), read with the server stopped. */
function secretRows(dataDir: string): { revision: number; key: string; value: Buffer }[] {
  return sqliteRows(path.join(dataDir, 'store.db'), "SELECT revision, key, value FROM log WHERE key LIKE '/registry/core/secrets/%' ORDER BY revision") as {
    revision: number;
    key: string;
    value: Buffer;
  }[];
}

const password = (res: RawResponse): string => Buffer.from(res.json.data.password as string, 'base64').toString();

describe('a KMS v2 plugin that is down when the server starts (SQLite)', () => {
  let dir: string;
  let kms: TestKmsPlugin;
  let server: EmbeddedServer | undefined;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kms-down-sqlite-'));
  });
  afterAll(async () => {
    await server?.close();
    await kms?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts, answers Secrets with 503 and serves everything else, recovers by itself, and leaves the stored values as they were', async () => {
    const set = await setUp(dir);
    kms = set.kms;
    server = await startEmbeddedServer(set.opts);
    let api = call(server);
    const created = await api('POST', '/api/v1/namespaces/default/secrets', secret('s1'));
    expect(created.status).toBe(201);
    expect((await api('PUT', '/api/v1/namespaces/default/secrets/s1', { ...secret('s1'), stringData: { password: 'changed' } })).status).toBe(200);
    expect((await api('POST', '/api/v1/namespaces/default/secrets', secret('s2'))).status).toBe(201);
    expect((await api('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'cm' }, data: { a: 'b' } })).status).toBe(201);
    await server.close();
    const before = secretRows(set.opts.dataDir);
    expect(before.map((r) => r.value.subarray(0, 24).toString())).toEqual(Array(3).fill('k8s:enc:kms:v2:test-kms:'));

    await kms.stop();
    server = await startEmbeddedServer(set.opts);
    api = call(server);
    const ready = await api('GET', '/readyz');
    expect([ready.status, ready.text]).toEqual([500, expect.stringContaining('[-]kms-providers failed: reason withheld')]);
    expect((await api('GET', '/readyz/kms-providers')).text).toContain('KMS Provider test-kms');
    expect503(await api('GET', '/api/v1/namespaces/default/secrets/s1'));
    expect503(await api('GET', '/api/v1/namespaces/default/secrets'));
    expect503(await api('GET', '/api/v1/secrets'));
    expect503(await api('POST', '/api/v1/namespaces/default/secrets', secret('s3')));
    expect503(await api('PUT', '/api/v1/namespaces/default/secrets/s1', { ...secret('s1'), metadata: { name: 's1', resourceVersion: created.json.metadata.resourceVersion } }));
    expect503(await api('DELETE', '/api/v1/namespaces/default/secrets/s2'));
    // A watch from before the outage's restart would deliver values nobody can read yet: an ERROR event with the 503.
    const target = { url: server.url, caPem: server.credentials.caPem, admin: { certPem: server.credentials.adminCertPem, keyPem: server.credentials.adminKeyPem } };
    const watch = await openWatch(target, `/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${created.json.metadata.resourceVersion}`);
    await watch.ended;
    const [failed] = watch.events;
    expect(failed).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 503, reason: 'ServiceUnavailable' } });
    // Everything the configuration does not encrypt is served as usual, metrics too.
    expect((await api('GET', '/api/v1/namespaces/default/configmaps/cm')).json.data).toEqual({ a: 'b' });
    expect((await api('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'cm2' } })).status).toBe(201);
    expect((await api('GET', '/api/v1/namespaces')).status).toBe(200);
    // Counted by the poll that runs at start, without decrypting anything.
    const secretsCounted = async (n: number): Promise<string | undefined> => {
      const text = (await api('GET', '/metrics')).text;
      return new RegExp(`^apiserver_storage_objects\\{resource="secrets"\\} ${n}$`, 'm').test(text) ? text : undefined;
    };
    const metrics = await waitFor('the Secrets counted', () => secretsCounted(2));
    expect(metrics).toMatch(/apiserver_storage_transformation_operations_total\{transformation_type="from_storage",transformer_prefix="k8s:enc:kms:v2:test-kms:",status="Unavailable"\} [1-9]/);

    await kms.start();
    // Nobody asks for a Secret: the store's own retry reads the values it kept once the plugin is back.
    await waitFor('the kept values to be read', async () => {
      const metrics = (await api('GET', '/metrics')).text;
      return /apiserver_storage_transformation_operations_total\{transformation_type="from_storage",transformer_prefix="k8s:enc:kms:v2:test-kms:",status="OK"\} [1-9]/.test(metrics) ? true : undefined;
    });
    const read = await waitFor('the Secret to read again', async () => {
      const r = await api('GET', '/api/v1/namespaces/default/secrets/s1');
      return r.status === 200 ? r : undefined;
    });
    expect(password(read)).toBe('changed');
    const recovered = (await api('GET', '/metrics')).text;
    expect(recovered).toMatch(/^apiserver_envelope_encryption_kms_operations_latency_seconds_count\{provider_name="test-kms",method_name="\/v2.KeyManagementService\/Decrypt",grpc_status_code="OK"\} [1-9]/m);
    expect(recovered).toMatch(/^apiserver_storage_envelope_transformation_cache_misses_total [1-9]/m);
    expect(recovered).toMatch(/^apiserver_envelope_encryption_key_id_hash_total\{transformation_type="from_storage",provider_name="test-kms",key_id_hash="sha256:[0-9a-f]{64}",apiserver_id_hash="sha256:[0-9a-f]{64}"\} [1-9]/m);
    const list = await api('GET', '/api/v1/namespaces/default/secrets');
    expect(list.json.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['s1', 's2']);
    const history = await openWatch(target, `/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${created.json.metadata.resourceVersion}`);
    const events = await history.waitFor(2);
    history.close();
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([['MODIFIED', 's1'], ['ADDED', 's2']]);
    await waitFor('Secret writes to work again', async () => ((await api('POST', '/api/v1/namespaces/default/secrets', secret('s3'))).status === 201 ? true : undefined));
    expect((await api('DELETE', '/api/v1/namespaces/default/secrets/s2')).status).toBe(200);
    await waitFor('readyz to pass', async () => ((await api('GET', '/readyz')).status === 200 ? true : undefined));
    await server.close();

    // The outage rewrote nothing: every row stored before it is there, byte for byte.
    const after = secretRows(set.opts.dataDir);
    for (const row of before) expect(after.find((r) => r.revision === row.revision)).toEqual(row);
    server = await startEmbeddedServer(set.opts);
    api = call(server);
    expect(password(await api('GET', '/api/v1/namespaces/default/secrets/s1'))).toBe('changed');
    expect(password(await api('GET', '/api/v1/namespaces/default/secrets/s3'))).toBe('pw-s3');
    expect((await api('GET', '/api/v1/namespaces/default/secrets/s2')).status).toBe(404);
  }, 90_000);
});

describeWithTools(['etcd'])('a KMS v2 plugin that is down when the server starts (etcd)', () => {
  let etcd: EtcdCluster;
  let dir: string;
  let kms: TestKmsPlugin;
  let server: EmbeddedServer | undefined;
  beforeAll(async () => {
    etcd = await startEtcd();
    dir = mkdtempSync(path.join(os.tmpdir(), 'kms-outage-etcd-'));
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await kms?.stop();
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers Secret reads and writes with 503 until the plugin is back, then serves them', async () => {
    const set = await setUp(dir, { storage: 'etcd', etcd: { endpoints: etcd.endpoints } });
    kms = set.kms;
    server = await startEmbeddedServer(set.opts);
    expect((await call(server)('POST', '/api/v1/namespaces/default/secrets', secret('s1'))).status).toBe(201);
    await server.close();

    await kms.stop();
    server = await startEmbeddedServer(set.opts);
    const api = call(server);
    expect((await api('GET', '/readyz')).text).toContain('[-]kms-providers failed');
    expect503(await api('GET', '/api/v1/namespaces/default/secrets/s1'));
    expect503(await api('POST', '/api/v1/namespaces/default/secrets', secret('s2')));
    expect((await api('GET', '/api/v1/namespaces/default/configmaps')).status).toBe(200);
    // The object counts are kept without decrypting anything (the poll at start counts them).
    await waitFor('the Secret counted', async () => ((await api('GET', '/metrics')).text.match(/^apiserver_storage_objects\{resource="secrets"\} 1$/m) ? true : undefined));

    await kms.start();
    const read = await waitFor('the Secret to read again', async () => {
      const r = await api('GET', '/api/v1/namespaces/default/secrets/s1');
      return r.status === 200 ? r : undefined;
    });
    expect(Buffer.from(read.json.data.password, 'base64').toString()).toBe('pw-s1');
    await waitFor('Secret writes to work again', async () => ((await api('POST', '/api/v1/namespaces/default/secrets', secret('s2'))).status === 201 ? true : undefined));
    expect((await api('GET', '/readyz')).status).toBe(200);
  }, 60_000);
});
