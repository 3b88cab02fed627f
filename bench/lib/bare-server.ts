/**
 * The ceiling for the `api` benchmark: a bare node:https server doing the same I/O as the API
 * server for one collection (parse a JSON body, keep objects in a Map, serialise them back, list in
 * pages, stream watch events to every watcher) with none of the machinery (no auth, validation,
 * storage or codecs). Same TLS certificate and the same client, so the ratio isolates our overhead.
 * Run as a child: `bare-server CERT_FILE KEY_FILE [CLIENT_CA_FILE]`; prints {"port":N} once listening.
 */
import { readFileSync } from 'node:fs';
import type { RequestListener, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

type Json = Record<string, unknown> & { metadata?: Record<string, unknown> };

const PREFIX = '/objects';

function bareHandler(): RequestListener {
  const objects = new Map<string, string>();
  const order: string[] = [];
  const watchers = new Set<ServerResponse>();
  let revision = 0;
  const send = (res: ServerResponse, status: number, body: string): void => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    if (req.method === 'POST' && url.pathname === PREFIX) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const obj = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
        const name = String(obj.metadata?.name ?? '');
        if (objects.has(name)) return send(res, 409, '{"reason":"AlreadyExists"}');
        obj.metadata = { ...obj.metadata, resourceVersion: String(++revision) };
        const body = JSON.stringify(obj);
        objects.set(name, body);
        order.push(name);
        const event = `{"type":"ADDED","object":${body}}\n`;
        for (const w of watchers) w.write(event);
        send(res, 201, body);
      });
      return;
    }
    if (req.method === 'GET' && url.pathname.startsWith(`${PREFIX}/`)) {
      const body = objects.get(decodeURIComponent(url.pathname.slice(PREFIX.length + 1)));
      return body === undefined ? send(res, 404, '{"reason":"NotFound"}') : send(res, 200, body);
    }
    if (req.method === 'GET' && url.pathname === PREFIX && url.searchParams.get('watch')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      watchers.add(res);
      res.on('close', () => watchers.delete(res));
      return;
    }
    if (req.method === 'GET' && url.pathname === PREFIX) {
      const from = Number(url.searchParams.get('continue') || 0);
      const limit = Number(url.searchParams.get('limit') || order.length);
      const names = order.slice(from, from + limit);
      const next = from + names.length < order.length ? String(from + names.length) : '';
      const items = names.map((n) => objects.get(n)).join(',');
      return send(res, 200, `{"kind":"List","metadata":{"resourceVersion":"${revision}","continue":"${next}"},"items":[${items}]}`);
    }
    send(res, 404, '{"reason":"NotFound"}');
  };
}

const [certFile, keyFile, clientCaFile] = process.argv.slice(2);
if (certFile && keyFile) {
  // With a client CA, clients are asked for a certificate as the API server asks (bench fleet's bare handshakes).
  const clientCerts = clientCaFile ? { ca: readFileSync(clientCaFile), requestCert: true, rejectUnauthorized: false } : {};
  const server = https.createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile), ...clientCerts }, bareHandler());
  server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: (server.address() as AddressInfo).port })));
  process.on('SIGTERM', () => process.exit(0));
}
