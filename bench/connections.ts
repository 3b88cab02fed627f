/**
 * `bench connections`: what one connection and one request cost the server, and what a TLS front
 * process would take off the process that owns the store (issue 29's design question). Server CPU
 * per request (ms, from process.cpuUsage in each server process), 8 clients at a time, for:
 * - a new TLS connection with a client certificate (a full handshake) and one request;
 * - a request on a kept-alive TLS connection;
 * - a new TLS connection resumed with a TLS 1.3 ticket;
 * - plain HTTP over a unix socket, new and kept-alive (the back end behind a front);
 * - a front process terminating TLS and piping to that unix socket: front and back CPU apart.
 * The certificates are kube-identity's own (a fresh data directory). Prints a table, then one JSON line.
 */
import 'reflect-metadata';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { CREDENTIAL_FILES, ensureCredentials } from '../src/apiserver/server/credentials.js';
import { nodeArgs, projectScript } from './lib/child.js';
import { freePort } from './lib/free-port.js';
import { formatTable, isMain, machine, round, type Machine } from './lib/report.js';
import { parseBenchArgs } from './lib/cli.js';

export interface ConnectionsResult extends Machine {
  name: 'connections';
  requests: number;
  /** Server CPU ms per request; for the front, [front, back]. */
  cpuMsPerRequest: Record<string, number | [number, number]>;
  loadAverage: number[];
}

interface Server {
  proc: ChildProcess;
  cpuMs(): Promise<number>;
}

async function start(args: string[]): Promise<Server> {
  const proc = fork(projectScript('bench/lib/connection-server'), args, { execArgv: nodeArgs(), stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  await new Promise((resolve, reject) => {
    proc.once('message', resolve);
    proc.once('exit', (code) => reject(new Error(`connection-server ${args[0]} exited (${code})`)));
  });
  return {
    proc,
    cpuMs: () =>
      new Promise((resolve) => {
        proc.once('message', (m: { cpuMs: number }) => resolve(m.cpuMs));
        proc.send('cpu');
      }),
  };
}

/** Server CPU per request over `n` requests made by `one`, 8 at a time, after a warm-up. */
async function measure(servers: Server[], n: number, one: () => Promise<void>): Promise<number[]> {
  const run = async (count: number): Promise<void> => {
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next++ < count) await one();
    }));
  };
  await run(Math.ceil(n / 10));
  const before = await Promise.all(servers.map((s) => s.cpuMs()));
  await run(n);
  const after = await Promise.all(servers.map((s) => s.cpuMs()));
  return servers.map((_, i) => round(((after[i] ?? 0) - (before[i] ?? 0)) / n, 3));
}

function post(mod: typeof http | typeof https, opts: https.RequestOptions): Promise<void> {
  const body = JSON.stringify({ spec: { request: 'B'.repeat(700) } });
  return new Promise((resolve, reject) => {
    const req = mod.request({ method: 'POST', path: '/apis/x', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, ...opts }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export async function runConnectionsBench(requests = 600): Promise<ConnectionsResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-connections-'));
  const servers: Server[] = [];
  try {
    await ensureCredentials(dir);
    const at = (k: keyof typeof CREDENTIAL_FILES): string => path.join(dir, CREDENTIAL_FILES[k]);
    const file = (k: keyof typeof CREDENTIAL_FILES): string => readFileSync(at(k), 'utf8');
    const tlsFiles = [at('servingCertPem'), at('servingKeyPem'), at('caPem')];
    const client = { ca: file('caPem'), cert: file('adminCertPem'), key: file('adminKeyPem'), host: '127.0.0.1' };
    const socketPath = path.join(dir, 'back.sock');
    const [httpsPort, frontPort] = [await freePort(), await freePort()];
    const direct = await start(['https', String(httpsPort), ...tlsFiles]);
    const back = await start(['unix', socketPath]);
    const front = await start(['front', String(frontPort), ...tlsFiles, socketPath]);
    servers.push(direct, back, front);
    const keptAlive = (): https.Agent => new https.Agent({ keepAlive: true, maxSockets: 8, maxCachedSessions: 0 });
    const [fresh] = await measure([direct], requests, () => post(https, { ...client, port: httpsPort, agent: false }));
    const agent = keptAlive();
    const [kept] = await measure([direct], requests, () => post(https, { ...client, port: httpsPort, agent }));
    const resuming = new https.Agent({ keepAlive: false, maxCachedSessions: 100 });
    const [resumed] = await measure([direct], requests, () => post(https, { ...client, port: httpsPort, agent: resuming }));
    const [unixFresh] = await measure([back], requests, () => post(http, { socketPath, agent: false }));
    const unixAgent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const [unixKept] = await measure([back], requests, () => post(http, { socketPath, agent: unixAgent }));
    const [frontFresh = 0, backFresh = 0] = await measure([front, back], requests, () => post(https, { ...client, port: frontPort, agent: false }));
    const frontAgent = keptAlive();
    const [frontKept = 0, backKept = 0] = await measure([front, back], requests, () => post(https, { ...client, port: frontPort, agent: frontAgent }));
    for (const a of [agent, resuming, unixAgent, frontAgent]) a.destroy();
    return {
      name: 'connections',
      ...machine(),
      requests,
      cpuMsPerRequest: {
        tlsNewConnection: fresh ?? 0,
        tlsKeptAlive: kept ?? 0,
        tlsResumed: resumed ?? 0,
        unixNewConnection: unixFresh ?? 0,
        unixKeptAlive: unixKept ?? 0,
        frontNewConnection: [frontFresh, backFresh],
        frontKeptAlive: [frontKept, backKept],
      },
      loadAverage: os.loadavg().map((l) => round(l, 2)),
    };
  } finally {
    for (const s of servers) s.proc.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatConnectionsTable(r: ConnectionsResult): string {
  const rows = Object.entries(r.cpuMsPerRequest).map(([k, v]) => (Array.isArray(v) ? [k, String(round(v[0] + v[1], 3)), `front ${v[0]} + back ${v[1]}`] : [k, String(v), '']));
  return [`server CPU ms per request, ${r.requests} requests each, load average ${r.loadAverage.join(' ')}`, formatTable(['case', 'ms', 'split'], rows)].join('\n');
}

if (isMain(import.meta.url)) {
  const args = parseBenchArgs(process.argv.slice(2), { command: 'bench/connections', usage: 'usage: node dist/bench/connections.js [N]\nThe server CPU of each connection path, N requests each (default 600).', options: {}, positionals: 1 });
  const n = Number(args.positionals[0] ?? 600);
  if (!Number.isInteger(n) || n < 1) args.fail(`N must be a positive integer, got ${args.positionals[0]}`);
  const r = await runConnectionsBench(n);
  console.log(formatConnectionsTable(r));
  console.log(JSON.stringify(r));
}
