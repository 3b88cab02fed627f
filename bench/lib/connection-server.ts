/**
 * The servers `bench connections` compares, one per process so each one's CPU is its own:
 * - `https PORT CERT KEY CLIENT_CA`: node:https asking for client certificates as the API server does;
 * - `unix SOCKET`: plain node:http on a unix socket (what a store-owning process behind TLS fronts would serve);
 * - `front PORT CERT KEY CLIENT_CA SOCKET`: TLS terminated, each connection's bytes piped to SOCKET (a front process).
 * Each answers a request with a CSR-sized JSON body after reading the peer chain once, prints
 * {"ready":true} once listening, and its CPU time in ms on each IPC message.
 */
import { readFileSync, rmSync } from 'node:fs';
import http, { type RequestListener } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls, { type TLSSocket } from 'node:tls';

const BODY = JSON.stringify({ apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'csr-abcde', resourceVersion: '12345' }, spec: { request: 'A'.repeat(700), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'] } });

const handler: RequestListener = (req, res) => {
  req.resume();
  req.on('end', () => {
    (req.socket as Partial<TLSSocket>).getPeerCertificate?.(true);
    res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY) });
    res.end(BODY);
  });
};

/** Serving certificate, key and client CA files (no project imports: the process starts in milliseconds). */
function tlsOptions([cert = '', key = '', ca = '']: string[]): tls.TlsOptions {
  return { cert: readFileSync(cert), key: readFileSync(key), ca: readFileSync(ca), requestCert: true, rejectUnauthorized: false };
}

const [mode, a, ...rest] = process.argv.slice(2);
let server: net.Server | undefined;
if (mode === 'https' && a) server = https.createServer({ ...tlsOptions(rest), keepAliveTimeout: 90_000 }, handler).listen(Number(a), '127.0.0.1');
if (mode === 'unix' && a) {
  rmSync(a, { force: true });
  server = http.createServer({ keepAliveTimeout: 90_000 }, handler).listen(a);
}
const backSocket = rest[3];
if (mode === 'front' && a && backSocket) {
  server = tls
    .createServer(tlsOptions(rest), (socket) => {
      const back = net.connect(backSocket);
      socket.pipe(back).pipe(socket);
      socket.on('error', () => back.destroy());
      back.on('error', () => socket.destroy());
    })
    .listen(Number(a), '127.0.0.1');
}
if (server) {
  server.on('listening', () => process.send?.({ ready: true }));
  process.on('message', () => {
    const u = process.cpuUsage();
    process.send?.({ cpuMs: (u.user + u.system) / 1000 });
  });
}
