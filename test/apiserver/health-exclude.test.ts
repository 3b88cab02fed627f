/**
 * `?exclude=NAME` on /healthz, /livez and /readyz, as kube-apiserver's health handler: the named
 * checks are skipped (`[+]NAME excluded: ok`), so a failing one excluded leaves the endpoint healthy,
 * and names no check has are reported in a `warn:` line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedServer, type EmbeddedServer } from '../../src/apiserver/server/embedded.js';
import { silentLogger } from '../../src/log/logger.js';
import { raw, type RawTarget } from '../helpers/http.js';

let dataDir: string;
let server: EmbeddedServer;
let target: RawTarget;
/** What the `controller` check (the one `up` adds for its CSR controller) answers. */
let controllerDown = true;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-health-exclude-'));
  const check = async (): Promise<void> => {
    if (controllerDown) throw new Error('controller stopped');
  };
  const healthChecks = [{ name: 'controller', check }];
  server = await startEmbeddedServer({ dataDir, port: 0, logger: silentLogger(), healthChecks });
  target = { url: server.url, caPem: server.credentials.caPem, admin: { certPem: server.credentials.adminCertPem, keyPem: server.credentials.adminKeyPem } };
});
afterAll(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Anonymous, as a probe sends; a single check's path needs a credential (the admin's). */
const probe = async (p: string, anonymous = true): Promise<[number, string]> => {
  const res = await raw(target, 'GET', p, { anonymous });
  return [res.status, res.text];
};

it('fails while a check fails, and passes once that check is excluded', async () => {
  expect(await probe('/readyz')).toEqual([500, '[+]ping ok\n[+]etcd ok\n[-]controller failed: reason withheld\nreadyz check failed\n']);
  expect(await probe('/readyz?exclude=controller')).toEqual([200, 'ok']);
  expect(await probe('/readyz?verbose&exclude=controller')).toEqual([200, '[+]ping ok\n[+]etcd ok\n[+]controller excluded: ok\nreadyz check passed\n']);
  expect(await probe('/healthz?verbose=1&exclude=controller')).toEqual([200, '[+]ping ok\n[+]etcd ok\n[+]controller excluded: ok\nhealthz check passed\n']);
  // Excluding another check does not hide the failing one.
  expect(await probe('/readyz?exclude=ping')).toEqual([500, '[+]ping excluded: ok\n[+]etcd ok\n[-]controller failed: reason withheld\nreadyz check failed\n']);
});

it('takes repeated exclude parameters and warns about names that match no check, sorted', async () => {
  expect(await probe('/readyz?verbose&exclude=zeta&exclude=controller&exclude=alpha&exclude=zeta')).toEqual([
    200,
    '[+]ping ok\n[+]etcd ok\n[+]controller excluded: ok\nwarn: some health checks cannot be excluded: no matches for "alpha","zeta"\nreadyz check passed\n',
  ]);
  // /livez has no controller check: excluding it only warns; without verbose a pass stays `ok`.
  expect(await probe('/livez?verbose&exclude=controller')).toEqual([200, '[+]ping ok\nwarn: some health checks cannot be excluded: no matches for "controller"\nlivez check passed\n']);
  expect(await probe('/livez?exclude=controller')).toEqual([200, 'ok']);
});

it('serves a single check on its own path whatever is excluded, as upstream', async () => {
  expect(await probe('/readyz/controller?exclude=controller', false)).toEqual([500, 'internal server error: controller stopped\n']);
  controllerDown = false;
  expect(await probe('/readyz/controller?exclude=controller', false)).toEqual([200, 'ok']);
  expect(await probe('/readyz?verbose')).toEqual([200, '[+]ping ok\n[+]etcd ok\n[+]controller ok\nreadyz check passed\n']);
});
