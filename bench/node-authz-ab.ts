/**
 * What a kubelet's Secret GET costs the API server, A/B: `node dist/bench/node-authz-ab.js
 * [--against=DIR] [--pods=N]` starts this build's `kube-identity apiserver` (B) and DIR's build (A;
 * without it, this build again: the noise floor) side by side on SQLite, each with N pods in one
 * namespace bound over 50 nodes (each pod naming one of 50 Secrets, the projected
 * kube-root-ca.crt ConfigMap and its ServiceAccount, as a Deployment's pods do), and every client
 * sends its requests to them in turn, as bench/api-ab.ts does: GETs of a Secret a pod on the
 * requesting node names (allowed by the Node authorizer), then of one no pod there names (refused).
 * Server CPU per request comes from /proc. It also prints the node graph's heap per 1,000 bound pods,
 * measured in this process (a MemoryStore holding the pods, bound over N/10 nodes, with and without the graph).
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runInNewContext } from 'node:vm';
import v8 from 'node:v8';
import { NodeGraph } from '../src/apiserver/authorization/node/node-graph.js';
import { MemoryStore } from '../src/apiserver/storage/memory/memory.js';
import { storageKey } from '../src/apiserver/storage/store.js';
import { abPhasesTable, buildOf, paired, type AbPhase } from './api-ab.js';
import { startApiServerProcess, type ApiServerProcess, type ApiServerProcessOptions } from './lib/apiserver-process.js';
import { HttpClient } from './lib/http-client.js';
import { parseBenchArgs } from './lib/cli.js';
import { isMain, machine, mb, printResult, round, type Machine } from './lib/report.js';

const NAMESPACE = 'bench';
const SECRETS = 50;
const CONCURRENCY = 4;
const NODES = 50;

export interface NodeAuthzParams {
  /** Pods in the namespace. */
  pods: number;
  /** How long each phase sends GETs. */
  phaseMs: number;
}

export const NODE_AUTHZ_DEFAULTS: NodeAuthzParams = { pods: 2000, phaseMs: 8000 };

export interface NodeAuthzResult extends Machine {
  name: 'node-authz-ab';
  params: NodeAuthzParams & { nodes: number; concurrency: number };
  a: string;
  results: { allowed: AbPhase; refused: AbPhase };
  /** The graph's heap per 1,000 bound pods (kB), and its pod and vertex counts at that size. */
  graphKbPer1000Pods: number;
  peakRssMb: { a: number; b: number };
}

type Start = (opts?: ApiServerProcessOptions) => Promise<ApiServerProcess>;

interface Side {
  server: ApiServerProcess;
  admin: HttpClient;
  /** A client per node, by node index. */
  nodes: HttpClient[];
}

const nodeName = (n: number): string => `node-${n}`;
const secretOf = (pod: number): string => `s-${pod % SECRETS}`;

/** A pod as a Deployment's: bound, naming one Secret by volume, the root CA ConfigMap and its ServiceAccount by projection. */
function pod(i: number, nodes: number): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `p-${i}`, namespace: NAMESPACE },
    spec: {
      nodeName: nodeName(i % nodes),
      serviceAccountName: 'default',
      volumes: [
        { name: 'secret', secret: { secretName: secretOf(i) } },
        { name: 'token', projected: { sources: [{ serviceAccountToken: { path: 'token' } }, { configMap: { name: 'kube-root-ca.crt' } }] } },
      ],
      containers: [{ name: 'app', image: 'app:1' }],
    },
  };
}

async function startSide(start: Start, tokenFile: string, pods: number, nodes: number): Promise<Side> {
  // No shedding on the event loop's delay: every request is answered, so its CPU is counted.
  const server = await start({ args: ['--token-auth-file', tokenFile, '--max-event-loop-delay', '0'] });
  const admin = new HttpClient(server.admin);
  await admin.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  for (let s = 0; s < SECRETS; s++) {
    await admin.json('POST', `/api/v1/namespaces/${NAMESPACE}/secrets`, { metadata: { name: `s-${s}` }, stringData: { k: 'v' } });
  }
  for (let i = 0; i < pods; i += 32) {
    const batch = Array.from({ length: Math.min(32, pods - i) }, (_, k) => admin.json('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, pod(i + k, nodes)));
    await Promise.all(batch);
  }
  const side = { server, admin, nodes: Array.from({ length: nodes }, (_, n) => admin.withToken(`node-token-${n}`)) };
  for (let n = 0; n < nodes; n++) await getSecret(side, n, secretOf(n), 200);
  return side;
}

/** Waits (up to `maxMs`) until neither server spends more than a tenth of a core: what setup left behind is not billed to the GETs. */
async function settle(sides: Side[], maxMs: number): Promise<void> {
  const deadline = performance.now() + maxMs;
  while (performance.now() < deadline) {
    const before = sides.map((s) => s.server.proc.cpuMs());
    await new Promise((r) => setTimeout(r, 500));
    if (sides.every((s, k) => s.server.proc.cpuMs() - (before[k] ?? 0) < 50)) return;
  }
}

/** A node's GET of a Secret, which must answer `status`. */
async function getSecret(side: Side, node: number, secret: string, status: number): Promise<void> {
  const client = side.nodes[node];
  if (!client) throw new Error(`no client for node ${node}`);
  const res = await client.request('GET', `/api/v1/namespaces/${NAMESPACE}/secrets/${secret}`);
  if (res.status !== status) throw new Error(`${nodeName(node)} GET secret ${secret}: ${res.status}, want ${status}: ${res.body}`);
}

/** The node graph's heap for `pods` bound pods (kB), measured after full collections. */
async function graphHeapKb(pods: number, nodes: number): Promise<number> {
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const heap = (): number => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const store = new MemoryStore();
  for (let i = 0; i < pods; i++) await store.create(storageKey('', 'pods', NAMESPACE, `p-${i}`), pod(i, nodes));
  const before = heap();
  const graph = new NodeGraph(store);
  while (!graph.ready()) await new Promise((r) => setTimeout(r, 1));
  if (graph.size().pods !== pods) throw new Error(`graph holds ${graph.size().pods} pods, want ${pods}`);
  const withGraph = heap();
  graph.stop();
  await store.close();
  return (withGraph - before) / 1024;
}

export async function runNodeAuthzBench(params: Partial<NodeAuthzParams> = {}, against?: string): Promise<NodeAuthzResult> {
  const { pods, phaseMs } = { ...NODE_AUTHZ_DEFAULTS, ...params };
  // Few nodes, each with a connection kept warm, so the GETs measure request handling, not TLS
  // handshakes: what the old authorizer cost grows with the namespace's pods, not with the nodes.
  const nodes = Math.min(NODES, Math.max(1, Math.floor(pods / 10)));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-node-authz-'));
  const tokenFile = path.join(dir, 'tokens.csv');
  writeFileSync(tokenFile, Array.from({ length: nodes }, (_, n) => `node-token-${n},system:node:${nodeName(n)},uid-${n},"system:nodes,system:authenticated"\n`).join(''));
  const startA: Start = against
    ? ((await import(pathToFileURL(path.resolve(against, 'dist/bench/lib/apiserver-process.js')).href)) as { startApiServerProcess: Start }).startApiServerProcess
    : startApiServerProcess;
  const started: Side[] = [];
  try {
    started.push(await startSide(startA, tokenFile, pods, nodes), await startSide(startApiServerProcess, tokenFile, pods, nodes));
    const sides = started as [Side, Side];
    await settle(sides, Math.min(30_000, phaseMs * 4));
    // Pod i is on node i % nodes: the Secret it names is allowed to that node, the next pod's is not (50 Secrets, 10 pods a node).
    const allowed = await paired(sides, CONCURRENCY, Number.MAX_SAFE_INTEGER, phaseMs, (s, i) => getSecret(s, (i * 7919) % pods % nodes, secretOf((i * 7919) % pods), 200));
    const refused = await paired(sides, CONCURRENCY, Number.MAX_SAFE_INTEGER, phaseMs, (s, i) => getSecret(s, (i * 7919) % nodes, `absent-${i % 100}`, 403));
    const [a, b] = sides.map((s) => mb(s.server.proc.memory().peakRss)) as [number, number];
    const kb = await graphHeapKb(pods, Math.max(1, Math.floor(pods / 10)));
    return {
      name: 'node-authz-ab',
      params: { pods, phaseMs, nodes, concurrency: CONCURRENCY },
      a: against ? buildOf(against) : 'this build',
      results: { allowed, refused },
      graphKbPer1000Pods: round((kb * 1000) / pods, 1),
      peakRssMb: { a, b },
      ...machine(),
    };
  } finally {
    for (const s of started) {
      s.admin.close();
      for (const n of s.nodes) n.close();
      await s.server.close();
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatNodeAuthzTable(r: NodeAuthzResult): string {
  return [
    `node-authz-ab: A = ${r.a}, B = this build, side by side on SQLite (${r.params.pods} pods on ${r.params.nodes} nodes in one namespace, ${r.params.concurrency} clients); node graph ${r.graphKbPer1000Pods} kB per 1,000 pods; peak RSS A ${r.peakRssMb.a} MB, B ${r.peakRssMb.b} MB; ${r.cores} cores`,
    "(server CPU µs per node Secret GET from /proc; B ÷ A below 1: B is cheaper)",
    abPhasesTable('GET', r.results),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const args = parseBenchArgs(process.argv.slice(2), {
    command: 'bench/node-authz-ab',
    usage: "usage: node dist/bench/node-authz-ab.js [--against=DIR] [--pods=N]\nA node's Secret GET on this build's API server and DIR's side by side (without DIR: this build twice), with N pods (2000) in the namespace.",
    options: { against: { type: 'string' }, pods: { type: 'string' } },
  });
  const result = await runNodeAuthzBench({ pods: args.number('pods', { min: 10, integer: true }) }, args.string('against'));
  printResult(result, formatNodeAuthzTable(result));
}
