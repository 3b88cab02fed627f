/**
 * `up --encryption-provider-config FILE` takes the operator's EncryptionConfiguration instead of up's
 * default: the banner names its rules and file, no default key is generated, and Secrets are stored
 * sealed as the file says and read back with kubectl.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CLI_ENV as env, kill9, startUpChild, type UpChild } from '../helpers/cli.js';

const run = promisify(execFile);
const MARKER = 'up-override-marker-51c7';

let dir: string;
let config: string;
let up: UpChild;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'encryption-up-'));
  config = path.join(dir, 'encryption.yaml');
  const key = Buffer.alloc(32, 0x2b).toString('base64');
  writeFileSync(config, `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n  - resources: [secrets]\n    providers:\n      - aesgcm: { keys: [{ name: key1, secret: ${key} }] }\n      - identity: {}\n`, { mode: 0o600 });
  up = await startUpChild(['--data-dir', path.join(dir, 'data'), '--port', '0', '--metrics-bind-address', '127.0.0.1:0', '--encryption-provider-config', config]);
}, 60_000);

afterAll(async () => {
  await kill9(up.child);
  rmSync(dir, { recursive: true, force: true });
});

it("uses the given configuration instead of up's default, says so, and seals Secrets as it says", async () => {
  expect(up.field('encryption')).toBe(`secrets: aesgcm, identity (${config})`);
  expect(existsSync(path.join(dir, 'data', 'encryption-config.yaml'))).toBe(false);
  const kubectl = async (...args: string[]): Promise<string> => (await run('kubectl', ['--kubeconfig', up.field('kubeconfig'), ...args], { env })).stdout;
  await kubectl('create', 'secret', 'generic', 'given', '-n', 'default', `--from-literal=password=${MARKER}`);
  const read = JSON.parse(await kubectl('get', 'secret', 'given', '-n', 'default', '-o', 'json')) as { data: { password: string } };
  expect(Buffer.from(read.data.password, 'base64').toString()).toBe(MARKER);
  const stored = Buffer.concat(['store.db', 'store.db-wal'].map((f) => path.join(dir, 'data', f)).filter(existsSync).map((f) => readFileSync(f)));
  expect(stored.includes('k8s:enc:aesgcm:v1:key1:')).toBe(true);
  expect(stored.includes('k8s:enc:secretbox:')).toBe(false);
  expect([stored.includes(MARKER), stored.includes(Buffer.from(MARKER).toString('base64'))]).toEqual([false, false]);
}, 60_000);
