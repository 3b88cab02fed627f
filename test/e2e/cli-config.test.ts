/**
 * `up` and `apiserver` check their configuration before anything starts: every bad flag or
 * environment value is reported at once, each with the form it should have, and exit code 2.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-cli-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('up: --storage mongo, --log-level loud and --port abc are each refused in words, before anything starts', async () => {
  const dataDir = path.join(dir, 'up');
  const { code, stderr } = await runCli(['up', '--data-dir', dataDir, '--storage', 'mongo', '--log-level', 'loud', '--port', 'abc']);
  expect(code).toBe(2);
  expect(stderr).toContain('kube-identity: invalid configuration:');
  expect(stderr).toContain('flag --storage: must be one of sqlite, memory, etcd, got "mongo"');
  expect(stderr).toContain('flag --log-level: must be one of debug, info, warn, error, got "loud"');
  expect(stderr).toContain('flag --port: must be an integer, got "abc"');
  expect(existsSync(dataDir)).toBe(false);
}, 180_000);

it('apiserver: a bad environment value names the variable', async () => {
  const { code, stderr } = await runCli(['apiserver', '--data-dir', path.join(dir, 'apiserver')], {
    env: { KUBE_IDENTITY_STORAGE: 'mongo', KUBE_IDENTITY_PORT: '70000' },
  });
  expect(code).toBe(2);
  expect(stderr).toContain('env KUBE_IDENTITY_STORAGE: must be one of sqlite, memory, etcd, got "mongo"');
  expect(stderr).toContain('env KUBE_IDENTITY_PORT: must be at most 65535, got 70000');
}, 180_000);

it("up takes the controller's options and checks them with the controller's rules, before anything starts", async () => {
  const dataDir = path.join(dir, 'up-controller');
  const { code, stderr } = await runCli(
    ['up', '--data-dir', dataDir, '--kubelet-serving-allowed-ip-ranges', '10.0.0.0/8,10.0.0.0/99', '--kubelet-serving-max-pending-per-node', '0', '--cleaner-interval', '0s'],
    { env: { KUBE_IDENTITY_KUBELET_SERVING_DNS_REGEX: '^{node}(' } },
  );
  expect(code).toBe(2);
  expect(stderr).toContain('flag --kubelet-serving-max-pending-per-node: must be at least 1, got 0');
  expect(existsSync(dataDir)).toBe(false);
  // The cross-field and value checks run in the controller's loader once up's own checks pass.
  const second = await runCli(['up', '--data-dir', dataDir, '--kubelet-serving-allowed-ip-ranges', '10.0.0.0/8,10.0.0.0/99', '--cleaner-interval', '0s'], {
    env: { KUBE_IDENTITY_KUBELET_SERVING_DNS_REGEX: '^{node}(' },
  });
  expect(second.code).toBe(2);
  expect(second.stderr).toContain('cleanerInterval must be greater than 0');
  expect(second.stderr).toContain('kubeletServingAllowedIpRanges: "10.0.0.0/99" is not a CIDR such as 10.0.0.0/8 or fd00::/8');
  expect(second.stderr).toContain('kubeletServingDnsRegex: Invalid regular expression');
  expect(existsSync(dataDir)).toBe(false);
}, 180_000);
