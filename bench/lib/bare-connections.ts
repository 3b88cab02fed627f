/**
 * The bare server's cost of one new client connection, for `bench fleet`'s ratio: the bare node:https
 * server (bench/lib/bare-server.ts, asking for client certificates as the API server does) with up's
 * serving certificate, and connections that each make a full TLS handshake with the admin's client
 * certificate and one GET, 8 at a time. A join costs up some number of these; that number, unlike
 * CPU ms, hardly depends on how fast or how busy the machine is.
 */
import https from 'node:https';
import path from 'node:path';
import { CREDENTIAL_FILES } from '../../src/apiserver/server/credentials.js';
import { projectScript, spawnNode, waitUntil } from './child.js';
import { round } from './report.js';

export async function bareConnectionCpuMs(dataDir: string, client: { certPem: string; keyPem: string; caPem: string }, connections = 400): Promise<number> {
  let port: number | undefined;
  const file = (k: keyof typeof CREDENTIAL_FILES): string => path.join(dataDir, CREDENTIAL_FILES[k]);
  const proc = spawnNode(projectScript('bench/lib/bare-server'), [file('servingCertPem'), file('servingKeyPem'), file('caPem')], {
    onStdout: (line) => (port = (JSON.parse(line) as { port: number }).port),
  });
  try {
    await waitUntil('the bare server', () => port, 30_000, proc);
    const one = (): Promise<void> =>
      new Promise((resolve, reject) => {
        const req = https.get({ host: '127.0.0.1', port, path: '/objects/none', ca: client.caPem, cert: client.certPem, key: client.keyPem, agent: false }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', reject);
      });
    const run = async (n: number): Promise<void> => {
      let next = 0;
      await Promise.all(Array.from({ length: 8 }, async () => {
        while (next++ < n) await one();
      }));
    };
    await run(40);
    const before = proc.cpuMs();
    await run(connections);
    return round((proc.cpuMs() - before) / connections, 3);
  } finally {
    await proc.stop();
  }
}
