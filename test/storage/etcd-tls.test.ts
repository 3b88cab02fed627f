/**
 * The store on an etcd member that serves TLS and requires client certificates (kube-apiserver's
 * --etcd-cafile, --etcd-certfile, --etcd-keyfile): the unary calls, the members' Status and the watch
 * stream (the client's own HTTP/2 over TLS, ALPN h2) present the client certificate and verify the
 * member against the given CA; without a client certificate, or trusting only the system's roots,
 * nothing is read or written.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../bench/lib/free-port.js';
import { EtcdStore } from '../../src/apiserver/storage/etcd/etcd.js';
import { StoreError, type StoreEvent } from '../../src/apiserver/storage/store.js';
import { describeWithTools } from '../helpers/tools.js';
import { until } from '../helpers/wait.js';

/** A CA, a serving certificate for 127.0.0.1 and a client certificate, as PEM files in `dir`. */
function certificates(dir: string): void {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl('req', '-x509', ...key, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=etcd-ca');
  writeFileSync(path.join(dir, 'server.cnf'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  writeFileSync(path.join(dir, 'client.cnf'), 'extendedKeyUsage=clientAuth\n');
  for (const [name, cn] of [['server', 'etcd'], ['client', 'kube-apiserver-etcd-client']]) {
    openssl('req', ...key, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.cnf`);
  }
}

describeWithTools(['etcd', 'openssl'])('the store on etcd over TLS with client certificates', () => {
  let dir: string;
  let etcd: ChildProcess | undefined;
  let endpoint: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'etcd-tls-'));
    certificates(dir);
    const [client, peer] = [await freePort(), await freePort()];
    endpoint = `https://127.0.0.1:${client}`;
    const peerUrl = `http://127.0.0.1:${peer}`;
    etcd = spawn(
      'etcd',
      ['--data-dir', path.join(dir, 'data'), '--listen-client-urls', endpoint, '--advertise-client-urls', endpoint, '--listen-peer-urls', peerUrl,
        '--initial-advertise-peer-urls', peerUrl, '--initial-cluster', `default=${peerUrl}`, '--cert-file', 'server.crt', '--key-file', 'server.key',
        '--client-cert-auth', '--trusted-ca-file', 'ca.crt'],
      { cwd: dir, stdio: 'ignore' },
    );
  });
  afterAll(async () => {
    if (etcd && etcd.exitCode === null) {
      const exited = new Promise((resolve) => etcd!.once('exit', resolve));
      etcd.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads, writes and watches with the client certificate, and gets nothing without it', async () => {
    const file = (name: string) => readFileSync(path.join(dir, name));
    const tls = { ca: file('ca.crt'), cert: file('client.crt'), key: file('client.key') };
    let store: EtcdStore | undefined;
    await until('etcd serving TLS', async () => {
      store = await EtcdStore.open({ endpoints: [endpoint], tls, requestTimeoutMs: 2000 }).catch(() => undefined);
      return store !== undefined;
    });
    try {
      const events: StoreEvent[] = [];
      const watch = store!.watch('/registry/core/configmaps/tls/', { fromRevision: store!.currentRevision(), onEvent: (e) => events.push(e) });
      const created = await store!.create('/registry/core/configmaps/tls/a', { metadata: { name: 'a', namespace: 'tls' } });
      expect((await store!.get('/registry/core/configmaps/tls/a'))?.revision).toBe(created.revision);
      await until('the watch event', async () => events.length === 1);
      expect([events[0]!.type, events[0]!.revision]).toEqual(['ADDED', created.revision]);
      watch.stop();
      expect(await store!.sizeBytes()).toEqual([{ endpoint, bytes: expect.any(Number) }]);
    } finally {
      await store!.close();
    }

    for (const without of [{ ca: tls.ca }, undefined]) {
      const refused = await EtcdStore.open({ endpoints: [endpoint], tls: without, requestTimeoutMs: 2000 }).catch((err: unknown) => err);
      expect([refused instanceof StoreError, (refused as StoreError).code]).toEqual([true, 'Unavailable']);
    }
  }, 60_000);
});
