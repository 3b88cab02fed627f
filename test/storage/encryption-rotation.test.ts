/**
 * Key rotation as Kubernetes documents it ("Rotate a decryption key"), step by step with kubectl
 * against the real server restarted between steps: add the new key second, restart; make it first,
 * restart; rewrite every Secret with `kubectl get secrets -A -o json | kubectl replace -f -`; remove
 * the old key, restart. After each step the stored values (read from store.db itself) say which key
 * sealed them, and every Secret still reads back.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { startEmbeddedServer, type EmbeddedServer } from '../../src/apiserver/server/embedded.js';
import { silentLogger } from '../../src/log/logger.js';
import { CLI_ENV } from '../helpers/cli.js';

const run = promisify(execFile);
const OLD = Buffer.alloc(32, 1).toString('base64');
const NEW = Buffer.alloc(32, 2).toString('base64');

function config(keys: [string, string][]): string {
  return `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - secretbox:
          keys:
${keys.map(([name, secret]) => `            - name: ${name}\n              secret: ${secret}`).join('\n')}
      - identity: {}
`;
}

describe('encryption key rotation, as documented', () => {
  let dir: string;
  let configFile: string;
  let server: EmbeddedServer | undefined;

  const start = async (keys: [string, string][], automaticReload = false): Promise<EmbeddedServer> => {
    writeFileSync(configFile, config(keys));
    server = await startEmbeddedServer({
      dataDir: path.join(dir, 'data'),
      logger: silentLogger(),
      port: 0,
      encryptionProviderConfig: configFile,
      encryptionProviderConfigAutomaticReload: automaticReload,
    });
    return server;
  };
  const stop = async (): Promise<void> => {
    await server?.close();
    server = undefined;
  };
  const kubectl = async (...args: string[]): Promise<string> => (await run('kubectl', ['--kubeconfig', server!.kubeconfigPath, ...args], { env: CLI_ENV })).stdout;
  /** The key that sealed each Secret's current value, read from the stopped server's file. */
  const sealedBy = (): Record<string, string> => {
    const db = new Database(path.join(dir, 'data', 'store.db'), { readonly: true });
    try {
      const rows = db
        .prepare("SELECT key, value FROM log l WHERE type != 'DELETED' AND key LIKE '/registry/core/secrets/%' AND revision = (SELECT max(revision) FROM log WHERE key = l.key)")
        .all() as { key: string; value: Buffer | string }[];
      return Object.fromEntries(rows.map((r) => [r.key.split('/').slice(-1)[0], /^k8s:enc:secretbox:v1:(\w+):/.exec(Buffer.from(r.value).toString('latin1'))?.[1] ?? 'plaintext']));
    } finally {
      db.close();
    }
  };
  const passwords = async (): Promise<Record<string, string>> => {
    const list = JSON.parse(await kubectl('get', 'secrets', '-A', '-o', 'json')) as { items: { metadata: { name: string }; data: { password: string } }[] };
    return Object.fromEntries(list.items.map((s) => [s.metadata.name, Buffer.from(s.data.password, 'base64').toString()]));
  };

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'encryption-rotation-'));
    configFile = path.join(dir, 'encryption.yaml');
  });
  afterAll(async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('rotates from the old key to the new one without losing a Secret', async () => {
    await start([['old', OLD]]);
    await kubectl('create', 'namespace', 'team-a');
    await kubectl('create', 'secret', 'generic', 's1', '--from-literal=password=one');
    await kubectl('create', 'secret', 'generic', 's2', '-n', 'team-a', '--from-literal=password=two');
    await stop();
    expect(sealedBy()).toEqual({ s1: 'old', s2: 'old' });

    // 1. The new key second: still written with the old one, both read.
    await start([
      ['old', OLD],
      ['new', NEW],
    ]);
    await kubectl('create', 'secret', 'generic', 's3', '--from-literal=password=three');
    expect(await passwords()).toEqual({ s1: 'one', s2: 'two', s3: 'three' });
    await stop();
    expect(sealedBy()).toEqual({ s1: 'old', s2: 'old', s3: 'old' });

    // 2. The new key first: new writes use it, old values still read.
    await start([
      ['new', NEW],
      ['old', OLD],
    ]);
    await kubectl('create', 'secret', 'generic', 's4', '--from-literal=password=four');
    expect(await passwords()).toEqual({ s1: 'one', s2: 'two', s3: 'three', s4: 'four' });

    // 3. Every Secret rewritten, so each is sealed with the new key.
    const replaced = await run('bash', ['-c', 'kubectl get secrets -A -o json | kubectl replace -f -'], { env: { ...CLI_ENV, KUBECONFIG: server!.kubeconfigPath } });
    expect(replaced.stdout.trim().split('\n').sort()).toEqual(['secret/s1 replaced', 'secret/s2 replaced', 'secret/s3 replaced', 'secret/s4 replaced']);
    await stop();
    expect(sealedBy()).toEqual({ s1: 'new', s2: 'new', s3: 'new', s4: 'new' });

    // 4. The old key removed: everything reads with the new key alone.
    await start([['new', NEW]]);
    expect(await passwords()).toEqual({ s1: 'one', s2: 'two', s3: 'three', s4: 'four' });
    const metrics = await kubectl('get', '--raw', '/metrics');
    expect(metrics).toMatch(/apiserver_storage_transformation_operations_total\{transformation_type="from_storage",transformer_prefix="k8s:enc:secretbox:v1:",status="OK"\} [1-9]/);
    await stop();
  }, 120_000);

  it('refuses to start, naming the Secret, when the key that sealed a current value is removed too early', async () => {
    await start([['new', NEW]]);
    await kubectl('create', 'secret', 'generic', 's5', '--from-literal=password=five');
    await stop();
    writeFileSync(configFile, config([['newer', OLD]]));
    await expect(startEmbeddedServer({ dataDir: path.join(dir, 'data'), logger: silentLogger(), port: 0, encryptionProviderConfig: configFile })).rejects.toThrow(
      /cannot read \/registry\/core\/secrets\/default\/s\d from the store: .*no matching key was found/,
    );
  }, 60_000);

  it('takes a changed file without a restart with --encryption-provider-config-automatic-reload, and keeps the running one when the new one is wrong', async () => {
    await start([['new', NEW]], true);
    const reloads = async (status: string): Promise<number> =>
      Number(new RegExp(`apiserver_encryption_config_controller_automatic_reloads_total\\{status="${status}"\\} (\\d+)`).exec(await kubectl('get', '--raw', '/metrics'))?.[1] ?? 0);
    const waitFor = async (status: string, count: number): Promise<void> => {
      for (let i = 0; i < 100 && (await reloads(status)) < count; i++) await new Promise((r) => setTimeout(r, 200));
      expect(await reloads(status)).toBe(count);
    };

    writeFileSync(configFile, 'apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources: []\n');
    await waitFor('failure', 1);
    await kubectl('create', 'secret', 'generic', 's6', '--from-literal=password=six');

    writeFileSync(configFile, config([['newest', OLD], ['new', NEW]]));
    await waitFor('success', 1);
    await kubectl('create', 'secret', 'generic', 's7', '--from-literal=password=seven');
    expect(await passwords()).toMatchObject({ s6: 'six', s7: 'seven' });
    await stop();
    expect(sealedBy()).toMatchObject({ s6: 'new', s7: 'newest' });
  }, 60_000);
});
