/**
 * Serving TLS as kube-apiserver's: Go's default TLS 1.2 suites only (OpenSSL's defaults would add
 * CCM, CCM8, ARIA and CBC-SHA256/384), --tls-min-version and --tls-cipher-suites with Go's names,
 * and --tls-cert-file/--tls-private-key-file re-read when they change. Each handshake is a real
 * `openssl s_client` against the embedded server.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { startEmbeddedServer, type EmbeddedServer } from '../../src/apiserver/server/embedded.js';
import { embeddedOptions } from '../../src/cmd/apiserver.js';
import { ConfigError, loadApiserverConfig } from '../../src/config/load.js';
import { createCertificateAuthority } from '../../src/pki/ca.js';
import { issueCertificate } from '../../src/pki/issue.js';
import { generateKeyPair, type KeyAlgorithm } from '../../src/pki/keys.js';
import { silentLogger } from '../../src/log/logger.js';

/** Whether `openssl s_client` completes a handshake with these arguments. */
function handshakes(port: number, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = execFile('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, ...args], { timeout: 10_000 }, (err) => resolve(!err));
    child.stdin?.end();
  });
}

const tls12 = (port: number, cipher: string): Promise<boolean> => handshakes(port, ['-tls1_2', '-cipher', cipher]);

/** The serving certificate a new connection gets (its serial number). */
function servedSerial(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().serialNumber);
      socket.end();
    });
    socket.on('error', reject);
  });
}

async function servingPair(name: string, alg: KeyAlgorithm = 'ECDSA-P256'): Promise<{ certPem: string; keyPem: string }> {
  const ca = await createCertificateAuthority({ commonName: `${name}-ca` });
  const key = generateKeyPair(alg);
  const now = Date.now();
  const certPem = await issueCertificate(ca, {
    subject: { commonName: name },
    publicKeyPem: key.publicKeyPem,
    ipAddresses: ['127.0.0.1'],
    usages: ['digital signature', 'key encipherment', 'server auth'],
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 86_400_000),
  });
  return { certPem, keyPem: key.privateKeyPem };
}

const serialOf = (certPem: string): string => new X509Certificate(certPem).serialNumber;

describe('serving TLS', () => {
  const dirs: string[] = [];
  const servers: EmbeddedServer[] = [];
  const start = async (flags: Record<string, string> = {}): Promise<EmbeddedServer> => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-tls-'));
    dirs.push(dataDir);
    const config = await loadApiserverConfig({ flags: { dataDir, storage: 'memory', port: '0', ...flags }, env: {} });
    const server = await startEmbeddedServer({ ...embeddedOptions(config), logger: silentLogger() });
    servers.push(server);
    return server;
  };
  afterAll(async () => {
    for (const s of servers) await s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("offers Go's default TLS 1.2 suites and refuses CCM, CCM8, ARIA, CBC-SHA256/384 and TLS 1.1", async () => {
    const { port } = await start();
    // The data directory's serving key is ECDSA P-256.
    for (const cipher of ['ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384', 'ECDHE-ECDSA-CHACHA20-POLY1305', 'ECDHE-ECDSA-AES128-SHA', 'ECDHE-ECDSA-AES256-SHA']) {
      expect([cipher, await tls12(port, cipher)]).toEqual([cipher, true]);
    }
    const refused = [
      'ECDHE-ECDSA-AES128-CCM',
      'ECDHE-ECDSA-AES256-CCM',
      'ECDHE-ECDSA-AES128-CCM8',
      'ECDHE-ECDSA-AES256-CCM8',
      'ECDHE-ECDSA-ARIA128-GCM-SHA256',
      'ECDHE-ECDSA-ARIA256-GCM-SHA384',
      'ECDHE-ECDSA-AES128-SHA256',
      'ECDHE-ECDSA-AES256-SHA384',
    ];
    for (const cipher of refused) expect([cipher, await tls12(port, cipher)]).toEqual([cipher, false]);
    expect(await handshakes(port, ['-tls1_3'])).toBe(true);
    expect(await handshakes(port, ['-tls1_1', '-cipher', 'DEFAULT@SECLEVEL=0'])).toBe(false);
  });

  it('takes --tls-min-version and --tls-cipher-suites with Go names', async () => {
    const { port } = await start({ tlsCipherSuites: 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384' });
    expect(await tls12(port, 'ECDHE-ECDSA-AES256-GCM-SHA384')).toBe(true);
    expect(await tls12(port, 'ECDHE-ECDSA-AES128-GCM-SHA256')).toBe(false);
    const only13 = await start({ tlsMinVersion: 'VersionTLS13' });
    expect(await handshakes(only13.port, ['-tls1_2'])).toBe(false);
    expect(await handshakes(only13.port, ['-tls1_3'])).toBe(true);
    await expect(loadApiserverConfig({ flags: { tlsCipherSuites: 'TLS_ECDHE_ECDSA_WITH_AES_128_CCM', tlsMinVersion: 'TLS1.2' }, env: {} })).rejects.toThrow(ConfigError);
    await expect(loadApiserverConfig({ flags: { tlsCertFile: '/x.crt' }, env: {} })).rejects.toThrow('tlsCertFile and tlsPrivateKeyFile must be given together');
  });

  it('serves a replaced --tls-cert-file/--tls-private-key-file to new connections, and keeps the old pair when the new one is unusable', async () => {
    const certDir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-tls-files-'));
    dirs.push(certDir);
    const certFile = path.join(certDir, 'tls.crt');
    const keyFile = path.join(certDir, 'tls.key');
    const first = await servingPair('first');
    writeFileSync(certFile, first.certPem);
    writeFileSync(keyFile, first.keyPem);
    const { port } = await start({ tlsCertFile: certFile, tlsPrivateKeyFile: keyFile });
    expect(await servedSerial(port)).toBe(serialOf(first.certPem));

    // An RSA pair this time, renamed into place as a rotation tool would.
    const second = await servingPair('second', 'RSA-2048');
    writeFileSync(`${certFile}.new`, second.certPem);
    writeFileSync(`${keyFile}.new`, second.keyPem);
    renameSync(`${keyFile}.new`, keyFile);
    renameSync(`${certFile}.new`, certFile);
    const deadline = Date.now() + 10_000;
    while ((await servedSerial(port)) !== serialOf(second.certPem) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await servedSerial(port)).toBe(serialOf(second.certPem));
    expect(await tls12(port, 'ECDHE-RSA-AES128-GCM-SHA256')).toBe(true);
    // RSA key exchange is not among Go's defaults.
    expect(await tls12(port, 'AES128-GCM-SHA256')).toBe(false);

    // A certificate whose key is not in the key file: ignored.
    writeFileSync(certFile, first.certPem);
    await new Promise((r) => setTimeout(r, 500));
    expect(await servedSerial(port)).toBe(serialOf(second.certPem));
  });
});
