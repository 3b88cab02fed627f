/**
 * Encryption at rest through the real server: a Secret written under each provider reads back
 * after a restart, its plaintext is nowhere in the store's files (SQLite's file and WAL, etcd as
 * etcdctl shows it) and its value starts with kube-apiserver's prefix; objects the configuration
 * does not list stay plain JSON.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startEmbeddedServer, type EmbeddedServer, type EmbeddedServerOptions } from '../../src/apiserver/server/embedded.js';
import { silentLogger } from '../../src/log/logger.js';
import { startEtcd, type EtcdCluster } from '../helpers/etcd.js';
import { raw, type RawResponse } from '../helpers/http.js';
import { startKmsPlugin, type TestKmsPlugin } from '../helpers/kms-plugin.js';
import { describeWithTools } from '../helpers/tools.js';

const run = promisify(execFile);
const MARKER = 'plaintext-marker-7f3a9c';
const KEY32 = Buffer.alloc(32, 0x5a).toString('base64');

function configFor(provider: string, kmsEndpoint = ''): string {
  const body: Record<string, string> = {
    aescbc: `aescbc: { keys: [{ name: key1, secret: ${KEY32} }] }`,
    aesgcm: `aesgcm: { keys: [{ name: key1, secret: ${KEY32} }] }`,
    secretbox: `secretbox: { keys: [{ name: key1, secret: ${KEY32} }] }`,
    kms: `kms: { apiVersion: v2, name: test-kms, endpoint: '${kmsEndpoint}', timeout: 2s }`,
  };
  return `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - ${body[provider]}
      - identity: {}
`;
}

const PREFIX: Record<string, string> = {
  aescbc: 'k8s:enc:aescbc:v1:key1:',
  aesgcm: 'k8s:enc:aesgcm:v1:key1:',
  secretbox: 'k8s:enc:secretbox:v1:key1:',
  kms: 'k8s:enc:kms:v2:test-kms:',
};

function admin(server: EmbeddedServer) {
  const target = { url: server.url, caPem: server.credentials.caPem, admin: { certPem: server.credentials.adminCertPem, keyPem: server.credentials.adminKeyPem } };
  return (method: string, p: string, body?: unknown): Promise<RawResponse> => raw(target, method, p, { body });
}

async function writeSecretAndConfigMap(server: EmbeddedServer): Promise<void> {
  const call = admin(server);
  const secret = await call('POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 's1' }, stringData: { password: MARKER } });
  expect(secret.status).toBe(201);
  const cm = await call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'plain-cm' }, data: { note: 'configmaps-stay-plain' } });
  expect(cm.status).toBe(201);
}

async function readSecret(server: EmbeddedServer): Promise<string> {
  const res = await admin(server)('GET', '/api/v1/namespaces/default/secrets/s1');
  expect(res.status).toBe(200);
  return Buffer.from(res.json.data.password as string, 'base64').toString();
}

/** Every byte the SQLite store keeps on disk. */
function sqliteBytes(dir: string): Buffer {
  return Buffer.concat(['store.db', 'store.db-wal'].map((f) => path.join(dir, f)).filter(existsSync).map((f) => readFileSync(f)));
}

function expectSealed(bytes: Buffer, prefix: string): void {
  expect(bytes.includes(MARKER)).toBe(false);
  expect(bytes.includes(Buffer.from(MARKER).toString('base64'))).toBe(false);
  expect(bytes.includes(prefix)).toBe(true);
}

describe('encryption at rest on SQLite', () => {
  let dir: string;
  let kms: TestKmsPlugin | undefined;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'encryption-sqlite-'));
  });
  afterEach(async () => {
    await kms?.stop();
    kms = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['aescbc', 'aesgcm', 'secretbox', 'kms'])('%s: a Secret is sealed in store.db and reads back after a restart', async (provider) => {
    if (provider === 'kms') kms = await startKmsPlugin(path.join(dir, 'kms.sock'));
    const config = path.join(dir, 'encryption.yaml');
    writeFileSync(config, configFor(provider, kms?.endpoint));
    const opts: EmbeddedServerOptions = { dataDir: path.join(dir, 'data'), logger: silentLogger(), port: 0, encryptionProviderConfig: config };
    let server = await startEmbeddedServer(opts);
    await writeSecretAndConfigMap(server);
    expect(await readSecret(server)).toBe(MARKER);
    await server.close();

    const bytes = sqliteBytes(opts.dataDir);
    expectSealed(bytes, PREFIX[provider]!);
    expect(bytes.includes('configmaps-stay-plain')).toBe(true);

    server = await startEmbeddedServer(opts);
    try {
      expect(await readSecret(server)).toBe(MARKER);
      if (kms) expect(kms.calls.Decrypt).toBe(1); // the restart needed the seed once, for every value
    } finally {
      await server.close();
    }
  });
});

describeWithTools(['etcd', 'etcdctl'])('encryption at rest on etcd', () => {
  let etcd: EtcdCluster;
  let dir: string;
  let kms: TestKmsPlugin;
  beforeAll(async () => {
    etcd = await startEtcd();
    dir = mkdtempSync(path.join(os.tmpdir(), 'encryption-etcd-'));
    kms = await startKmsPlugin(path.join(dir, 'kms.sock'));
  }, 60_000);
  afterAll(async () => {
    await kms?.stop();
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const etcdctlGet = async (key: string): Promise<Buffer> => {
    const { stdout } = await run('etcdctl', ['--endpoints', etcd.endpoints.join(','), 'get', key, '--print-value-only'], {
      env: { ...process.env, ETCDCTL_API: '3' },
      encoding: 'buffer',
    });
    return stdout;
  };

  it.each(['secretbox', 'kms'])('%s: etcdctl get shows the prefix kube-apiserver writes, and the Secret reads back after a restart', async (provider) => {
    const config = path.join(dir, `${provider}.yaml`);
    writeFileSync(config, configFor(provider, kms.endpoint));
    const opts: EmbeddedServerOptions = {
      dataDir: path.join(dir, provider),
      logger: silentLogger(),
      port: 0,
      storage: 'etcd',
      etcd: { endpoints: etcd.endpoints, prefix: `/${provider}` },
      encryptionProviderConfig: config,
    };
    let server = await startEmbeddedServer(opts);
    await writeSecretAndConfigMap(server);
    await server.close();

    const stored = await etcdctlGet(`/${provider}/secrets/default/s1`);
    expect(stored.subarray(0, PREFIX[provider]!.length).toString()).toBe(PREFIX[provider]);
    expectSealed(stored, PREFIX[provider]!);
    expect(JSON.parse((await etcdctlGet(`/${provider}/configmaps/default/plain-cm`)).toString()).data).toEqual({ note: 'configmaps-stay-plain' });

    server = await startEmbeddedServer(opts);
    try {
      expect(await readSecret(server)).toBe(MARKER);
      // A watch decodes (and decrypts) the values it delivers.
      const list = await admin(server)('GET', '/api/v1/namespaces/default/secrets');
      expect(list.json.items.map((s: { metadata: { name: string } }) => s.metadata.name)).toEqual(['s1']);
    } finally {
      await server.close();
    }
  }, 60_000);
});
