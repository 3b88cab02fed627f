/** A kubelet's client certificate for a test server: CN=system:node:NAME, O=system:nodes, issued by its client CA. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { issueCertificate } from '../../src/pki/issue.js';
import { generateKeyPair } from '../../src/pki/keys.js';
import type { TestServer } from './server.js';

export async function kubeletClientCert(server: TestServer, node: string): Promise<{ certPem: string; keyPem: string }> {
  const key = generateKeyPair();
  const ca = { certPem: server.caPem, keyPem: readFileSync(path.join(server.dataDir, 'ca.key'), 'utf8') };
  const certPem = await issueCertificate(ca, {
    subject: { commonName: `system:node:${node}`, organizations: ['system:nodes'] },
    publicKeyPem: key.publicKeyPem,
    usages: ['digital signature', 'client auth'],
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 3_600_000),
  });
  return { certPem, keyPem: key.privateKeyPem };
}
