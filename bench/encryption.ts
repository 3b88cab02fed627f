/**
 * What encryption at rest costs: `kube-identity apiserver` (SQLite, its own process) without an
 * encryption configuration beside one that encrypts Secrets (secretbox by default, `up`'s choice),
 * measured in the same run with the same client: Secret creates and gets (encrypted on one side),
 * and CSR creates, the identity hot path, which is never encrypted (it pays the transformer lookup
 * only). Ratios are encrypted ÷ plain, by throughput and by server CPU per request.
 * Run: `node dist/bench/run.js encryption` after `npm run build`, or call runEncryptionBench().
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compare, figures, measured, opRow, type OpFigures, type PhaseFigures } from './api.js';
import { startApiServerProcess, type ApiServerProcess } from './lib/apiserver-process.js';
import { HttpClient } from './lib/http-client.js';
import { CSR_PATH, kubeletCsrObject, kubeletCsrPems } from './lib/kubelet-csr.js';
import { closedLoop } from './lib/load.js';
import { formatTable, isMain, machine, printResult, round, type Machine } from './lib/report.js';
import { parseBenchArgs } from './lib/cli.js';
import { keyedProvider } from '../src/apiserver/encryption/providers.js';

export const ENCRYPTION_PROVIDERS = ['secretbox', 'aesgcm', 'aescbc'] as const;
export type EncryptionProvider = (typeof ENCRYPTION_PROVIDERS)[number];

export interface EncryptionBenchParams {
  /** Secrets created per side (then read). */
  secrets: number;
  /** CSRs created per side. */
  csrs: number;
  concurrency: number;
  /** How long the Secret get phase runs per side. */
  getMs: number;
  provider: EncryptionProvider;
}

export interface EncryptionBenchResult extends Machine {
  name: 'encryption';
  params: EncryptionBenchParams;
  /** `bare` is the server without encryption, `api` the one encrypting Secrets (OpFigures' names). */
  results: { secretCreate: OpFigures; secretGet: OpFigures; csrCreate: OpFigures };
  /** Encrypted ÷ plain throughput of each phase. */
  ratios: { secretCreate: number; secretGet: number; csrCreate: number };
  /**
   * The encrypting server's own mean time to encrypt a Secret (apiserver_storage_transformation_duration_seconds,
   * to_storage; wall time, so a busy machine inflates it), in µs.
   */
  encryptUsPerWrite: number;
  /**
   * CPU µs one seal of a stored Secret takes with the provider (measured in this process, which a
   * busy machine barely changes), and that as a share of the encrypting server's CPU per Secret create.
   */
  sealCpuUs: number;
  sealShareOfCreateCpu: number;
}

export const ENCRYPTION_DEFAULTS: EncryptionBenchParams = { secrets: 2000, csrs: 1000, concurrency: 16, getMs: 3000, provider: 'secretbox' };

const NAMESPACE = 'bench';
const SECRETS = `/api/v1/namespaces/${NAMESPACE}/secrets`;
const VALUE = randomBytes(192).toString('base64');
const pad = (i: number): string => String(i).padStart(6, '0');
const secret = (name: string): object => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: { value: VALUE } });

function encryptionConfig(dir: string, provider: EncryptionProvider): string {
  const file = path.join(dir, 'encryption.yaml');
  const key = randomBytes(32).toString('base64');
  writeFileSync(
    file,
    `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n  - resources: [secrets]\n    providers:\n      - ${provider}: { keys: [{ name: key1, secret: ${key} }] }\n      - identity: {}\n`,
    { mode: 0o600 },
  );
  return file;
}

interface Side {
  server: ApiServerProcess;
  client: HttpClient;
}

export async function runEncryptionBench(params: Partial<EncryptionBenchParams> = {}, opts: { execArgv?: string[] } = {}): Promise<EncryptionBenchResult> {
  const p: EncryptionBenchParams = { ...ENCRYPTION_DEFAULTS, ...params };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-bench-encryption-'));
  const sides: Side[] = [];
  try {
    const csrPems = await kubeletCsrPems(p.csrs);
    for (const args of [[], ['--encryption-provider-config', encryptionConfig(dir, p.provider)]]) {
      const server = await startApiServerProcess({ execArgv: opts.execArgv, args });
      const client = new HttpClient(server.admin);
      sides.push({ server, client });
      await client.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    }
    const phases: Record<keyof EncryptionBenchResult['results'], (s: Side) => Promise<PhaseFigures>> = {
      secretCreate: async (s) => figures(await closedLoop({ concurrency: p.concurrency, maxOps: p.secrets, maxMs: 120_000, op: (i) => s.client.json('POST', SECRETS, secret(`s-${pad(i)}`)).then(() => undefined) })),
      secretGet: async (s) =>
        figures(await closedLoop({ concurrency: p.concurrency, maxOps: Number.MAX_SAFE_INTEGER, maxMs: p.getMs, op: (i) => s.client.json('GET', `${SECRETS}/s-${pad((i * 7919) % p.secrets)}`).then(() => undefined) })),
      csrCreate: async (s) =>
        figures(await closedLoop({ concurrency: p.concurrency, maxOps: p.csrs, maxMs: 120_000, op: (i) => s.client.json('POST', CSR_PATH, kubeletCsrObject(`csr-${pad(i)}`, csrPems[i]!)).then(() => undefined) })),
    };
    const [plain, encrypted] = sides as [Side, Side];
    const results = {} as EncryptionBenchResult['results'];
    let encryptedFirst = false;
    for (const [op, run] of Object.entries(phases) as [keyof typeof phases, (s: Side) => Promise<PhaseFigures>][]) {
      // The phases alternate which side goes first, so neither always runs on a warmer (or busier) machine.
      const [one, two] = encryptedFirst ? [encrypted, plain] : [plain, encrypted];
      const first = await measured(one.server.proc, () => run(one));
      const second = await measured(two.server.proc, () => run(two));
      const [b, a] = encryptedFirst ? [second, first] : [first, second];
      encryptedFirst = !encryptedFirst;
      results[op] = compare(b, a);
    }
    const ratios = { secretCreate: results.secretCreate.ratio, secretGet: results.secretGet.ratio, csrCreate: results.csrCreate.ratio };
    const encryptUsPerWrite = round(meanToStorageSeconds((await encrypted.client.request('GET', '/metrics')).body) * 1e6, 1);
    const stored = (await encrypted.client.request('GET', `${SECRETS}/s-${pad(0)}`)).body;
    const sealCpuUs = round(sealCpu(p.provider, stored), 1);
    const cpu = results.secretCreate.api.cpuUsPerOp;
    return { name: 'encryption', params: p, results, ratios, encryptUsPerWrite, sealCpuUs, sealShareOfCreateCpu: cpu > 0 ? round(sealCpuUs / cpu) : 0, ...machine() };
  } finally {
    for (const s of sides) {
      s.client.close();
      await s.server.close();
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/** CPU µs per seal of `json` with the server's provider code (after a warm-up). */
function sealCpu(provider: EncryptionProvider, json: string): number {
  const seal = keyedProvider(provider, [{ name: 'key1', secret: randomBytes(32) }]);
  const data = Buffer.from(json);
  const key = `/registry/core/secrets/${NAMESPACE}/s-000000`;
  for (let i = 0; i < 500; i++) seal.seal(data, key);
  const rounds = 5000;
  const before = process.cpuUsage();
  for (let i = 0; i < rounds; i++) seal.seal(data, key);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / rounds;
}

/** The mean of apiserver_storage_transformation_duration_seconds for to_storage, from a /metrics scrape. */
function meanToStorageSeconds(metrics: string): number {
  const value = (suffix: string): number => {
    const line = metrics.split('\n').find((l) => l.startsWith(`apiserver_storage_transformation_duration_seconds_${suffix}{`) && l.includes('transformation_type="to_storage"'));
    return Number(line?.slice(line.lastIndexOf(' ') + 1) ?? 0);
  };
  const count = value('count');
  return count > 0 ? value('sum') / count : 0;
}

export function formatEncryptionTable(r: EncryptionBenchResult): string {
  const p = r.params;
  const rows = Object.entries(r.results).map(([op, f]) => opRow(op, f, f.bare.errors + f.api.errors));
  return [
    `encryption: Secrets encrypted with ${p.provider} vs not; ${p.secrets} Secrets, ${p.csrs} CSRs, ${p.concurrency} clients; SQLite; ${r.cores} cores; node ${r.node}`,
    '(requests/s; CPU: µs of server CPU per request, from /proc; x plain CPU = plain CPU / encrypted CPU)',
    formatTable(['op', 'plain/s', 'encrypted/s', 'x plain', 'CPU µs plain/enc', 'x plain CPU', 'plain p50/p90/p99/max ms', 'enc p50/p90/p99/max ms', 'errors'], rows),
    `encrypted ÷ plain in this run: ${Object.entries(r.ratios)
      .map(([k, v]) => `${k} ${v.toFixed(3)}`)
      .join(', ')}`,
    `sealing a Secret: ${r.sealCpuUs} µs of CPU (${(r.sealShareOfCreateCpu * 100).toFixed(1)}% of the server's CPU per Secret create); the server's mean encrypt time (wall) ${r.encryptUsPerWrite} µs`,
  ].join('\n');
}

if (isMain(import.meta.url)) {
  parseBenchArgs(process.argv.slice(2), { command: 'bench/encryption', usage: 'usage: node dist/bench/encryption.js\nThe encryption benchmark with its defaults; its flags: npm run bench -- encryption --help', options: {} });
  const result = await runEncryptionBench();
  printResult(result, formatEncryptionTable(result));
}
