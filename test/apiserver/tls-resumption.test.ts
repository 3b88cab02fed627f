/**
 * TLS session resumption (a hot spot of issue 29: every kubelet reconnecting after a restart or a
 * rotation pays a handshake): a client that kept its session resumes it, and a resumed connection
 * authenticates as the certificate of the session it resumes, never as anyone else.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import { CREDENTIAL_FILES } from '../../src/apiserver/server/credentials.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

/** One connection: who the server says we are, whether the session was resumed, and the session to resume. */
function whoAmI(session?: Buffer): Promise<{ user: string; resumed: boolean; session?: Buffer }> {
  const url = new URL(server.url);
  const file = (name: keyof typeof CREDENTIAL_FILES): Buffer => readFileSync(path.join(server.dataDir, CREDENTIAL_FILES[name]));
  return new Promise((resolve, reject) => {
    let next: Buffer | undefined;
    let out = '';
    const body = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    const socket = tls.connect({ host: url.hostname, port: Number(url.port), ca: server.caPem, cert: file('adminCertPem'), key: file('adminKeyPem'), session }, () => {
      socket.write(`POST /apis/authentication.k8s.io/v1/selfsubjectreviews HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    });
    socket.on('session', (s: Buffer) => (next = s));
    socket.on('data', (d: Buffer) => (out += d.toString('utf8')));
    socket.on('end', () => {
      const review = JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4)) as { status?: { userInfo?: { username?: string } } };
      resolve({ user: review.status?.userInfo?.username ?? '', resumed: socket.isSessionReused(), session: next });
    });
    socket.on('error', reject);
  });
}

it('resumes a kept TLS session and authenticates it as the certificate it was made with', async () => {
  const first = await whoAmI();
  expect(first).toMatchObject({ user: 'kubernetes-admin', resumed: false });
  expect(first.session).toBeDefined();
  const again = await whoAmI(first.session);
  expect(again).toMatchObject({ user: 'kubernetes-admin', resumed: true });
});
