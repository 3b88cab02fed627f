/**
 * `bench soak`: a Jepsen-style fault soak of two API server replicas on three etcd members. Each
 * replica is a real `kube-identity apiserver --storage etcd` process reaching every member through a
 * TCP proxy the soak controls. Writers create ConfigMaps and swap one hot ConfigMap by
 * resourceVersion through both replicas, a watcher follows each replica, and a nemesis injects a
 * fault every 2-3 s (bench/lib/nemesis.ts; the short soak every 1-1.5 s until it injected every
 * kind). Afterwards it checks, and reports as violations:
 * - no replica process exited;
 * - every acknowledged create is there with its resourceVersion, through both replicas; no create
 *   or swap refused with a definite failure (409, 503) ever appears; unknown outcomes are only counted;
 * - each watcher saw events in resourceVersion order, none twice, and between a list and its next
 *   410 every acknowledged write (no gap); at the end its events and bookmarks reach the newest
 *   resourceVersion a list gives (a bookmark: every event up to it was sent, so writes outside the
 *   namespace count too);
 * - list resourceVersions never went back on either replica, nor one writer's acknowledgements;
 * - the hot object's history (reads and swaps, unknown swaps as such) is linearizable.
 * `make test` runs a short one (test/storage/etcd-soak.test.ts); `bench soak --duration=600` the long one.
 */
import { Etcd3 } from 'etcd3';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApiServerProcess, type ApiServerProcess } from './lib/apiserver-process.js';
import { startEtcd } from './lib/etcd-cluster.js';
import { HttpClient } from './lib/http-client.js';
import { checkCasRegister } from './lib/linearizability.js';
import { FAULTS, Nemesis, type Fault } from './lib/nemesis.js';
import { formatTable, machine, type Machine } from './lib/report.js';
import { createWriter, NS_PATH, rvProber, swapWriter, Watcher, type Records, type Write } from './lib/soak-clients.js';
import { startTcpProxy, type TcpProxy } from './lib/tcp-proxy.js';

export interface SoakParams {
  /** How long faults are injected; with `everyFault`, the most. */
  durationS: number;
  /** Stop once every kind of fault was injected (the short soak), instead of at `durationS`. */
  everyFault: boolean;
  /** The pause before each fault is this plus up to half of it again. */
  faultGapMs: number;
  seed: number;
  createWritersPerReplica: number;
  swapWritersPerReplica: number;
}

export interface SoakResult {
  benchmark: 'soak';
  machine: Machine;
  params: SoakParams;
  /** Start-up (etcd, proxies, replicas) and the soak itself with its checks. */
  startupS: number;
  seconds: number;
  faults: Record<Fault, number> & { skipped: number };
  creates: { acknowledged: number; refused: number; unknown: number; unknownApplied: number };
  swaps: { acknowledged: number; refused: number; unknown: number; reads: number; checked: number; linearizable: boolean };
  watch: { events: number; relists: number; resumes: number };
  statuses: Record<string, number>;
  replicaExits: string[];
  violations: string[];
}

interface FinalList {
  metadata: { resourceVersion: string };
  items: { metadata: { name: string; resourceVersion: string }; data?: { v?: string } }[];
}

/** etcd's progress notifications and the replicas' bookmarks, both this often. */
const PROGRESS_S = 1;
const DEFAULTS: SoakParams = { durationS: 30, everyFault: false, faultGapMs: 2000, seed: 1, createWritersPerReplica: 2, swapWritersPerReplica: 1 };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: string, cond: () => Promise<boolean> | boolean, timeoutMs: number, violations: string[]): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) {
      violations.push(`timed out waiting for ${what}`);
      return;
    }
    await sleep(100);
  }
}

export async function runSoak(p: Partial<SoakParams> = {}, progress: (line: string) => void = () => undefined): Promise<SoakResult> {
  const params = { ...DEFAULTS, ...p };
  let seed = params.seed;
  const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const rec: Records = { writes: [], hot: [], statuses: new Map(), violations: [] };
  const replicaExits: string[] = [];

  const t0 = performance.now();
  // A watcher that has caught up learns of revisions outside its namespace (the kubernetes Service the
  // replicas rewrite, for one) from bookmarks, which follow etcd's progress notifications.
  const etcd = await startEtcd({ members: 3, progressNotifyInterval: `${PROGRESS_S}s` });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'soak-'));
  const proxies: TcpProxy[][] = [];
  const replicas: ApiServerProcess[] = [];
  const clients: HttpClient[] = [];
  try {
    for (let r = 0; r < 2; r++) {
      proxies.push(await Promise.all(etcd.members.map((m) => startTcpProxy({ host: '127.0.0.1', port: Number(new URL(m.clientUrl).port) }))));
    }
    // Both start together on one empty data directory, as a Deployment's replicas do.
    // Settled, not Promise.all: a replica that started is kept for the `finally` to stop even when the other failed.
    const started = await Promise.allSettled(proxies.map((ps) => startApiServerProcess({ storage: 'etcd', etcdServers: ps.map((x) => `http://${x.address}`), dataDir, args: ['--bookmark-interval-ms', String(PROGRESS_S * 1000)] })));
    for (const s of started) if (s.status === 'fulfilled') replicas.push(s.value);
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    replicas.forEach((rep, i) =>
      rep.proc.child.once('exit', (code, signal) => replicaExits.push(`replica ${i} exited (${code ?? signal}): ${rep.proc.stderrTail().slice(-1500)}`)),
    );
    clients.push(...replicas.map((rep) => new HttpClient(rep.admin, 16)));
    await clients[0]!.json('POST', NS_PATH, { metadata: { name: 'hot' }, data: { v: 'v0' } });
    progress(`soak: 3 etcd members, 2 replicas up; faults for ${params.durationS} s`);

    const start = performance.now();
    let stopping = false;
    let watchersDone = false;
    const done = (): boolean => stopping;
    const watchers = clients.map((c, i) => new Watcher(c, String(i), rec));
    const watching = watchers.map((w) => w.run());
    const probing = clients.map((c, i) => rvProber(c, String(i), rec, () => watchersDone));
    const writing = clients.flatMap((c, r) => [
      ...Array.from({ length: params.createWritersPerReplica }, (_, w) => createWriter(c, `r${r}w${w}`, rec, done)),
      ...Array.from({ length: params.swapWritersPerReplica }, (_, w) => swapWriter(c, `r${r}s${w}`, rec, done)),
    ]);

    const nemesis = new Nemesis(etcd, proxies, rand);
    const deadline = Date.now() + params.durationS * 1000;
    const faultsDone = (): boolean => Date.now() >= deadline || (params.everyFault && FAULTS.every((f) => nemesis.counts[f] > 0));
    while (!faultsDone()) {
      await sleep(params.faultGapMs * (1 + rand() / 2));
      if (Date.now() >= deadline) break;
      await nemesis.step();
      progress(`soak: ${nemesis.log[nemesis.log.length - 1]} (${Math.round((performance.now() - start) / 1000)} s)`);
    }
    await nemesis.healAll();
    nemesis.close();
    stopping = true;
    await Promise.all(writing);

    // Healed: both replicas serve again, and their watchers catch up with the last write.
    for (const [i, c] of clients.entries()) {
      await until(`replica ${i} ready`, async () => (await c.request('GET', '/readyz').catch(() => undefined))?.status === 200, 30_000, rec.violations);
    }
    const finals = (await Promise.all(clients.map((c) => c.json<FinalList>('GET', NS_PATH).catch(() => undefined)))).filter((f) => f !== undefined);
    if (finals.length < clients.length) rec.violations.push('a replica does not list after the faults healed');
    if (finals.length === 0) throw new Error(`no replica serves after the faults: ${replicaExits.join('; ')}`);
    const newest = Math.max(...finals.map((f) => Number(f.metadata.resourceVersion)));
    await catchUp(watchers, newest, etcd.endpoints, rec.violations);
    watchersDone = true;
    for (const w of watchers) w.stop();
    await Promise.all([...watching, ...probing]);

    const result = check(rec, finals, watchers);
    return {
      benchmark: 'soak',
      machine: machine(),
      params,
      startupS: Math.round((start - t0) / 1000),
      seconds: Math.round((performance.now() - start) / 1000),
      faults: { ...nemesis.counts, skipped: nemesis.skipped },
      ...result,
      watch: {
        events: watchers.reduce((n, w) => n + w.chains.reduce((m, c) => m + c.events.length, 0), 0),
        relists: watchers.reduce((n, w) => n + w.relists, 0),
        resumes: watchers.reduce((n, w) => n + w.resumes, 0),
      },
      statuses: Object.fromEntries([...rec.statuses].sort()),
      // Copied: the replicas' own exits when the soak stops them come after.
      replicaExits: [...replicaExits],
      violations: rec.violations,
    };
  } finally {
    for (const c of clients) c.close();
    await Promise.all(replicas.map((r) => r.close()));
    await Promise.all(proxies.flat().map((x) => x.close()));
    await etcd.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Each watcher reaches `newest` within 30 s, or the violation names what etcd holds past its position. */
async function catchUp(watchers: Watcher[], newest: number, endpoints: string[], violations: string[]): Promise<void> {
  for (const [i, w] of watchers.entries()) {
    const before = violations.length;
    await until(`watcher ${i} to reach ${newest}`, () => w.position >= newest, 30_000, violations);
    if (violations.length > before) violations.push(`watcher ${i} at ${w.position}; written after it: ${await writtenAfter(endpoints, w.position)}`);
  }
}

/** The keys etcd holds with a mod revision above `revision`. */
async function writtenAfter(endpoints: string[], revision: number): Promise<string> {
  const client = new Etcd3({ hosts: endpoints });
  try {
    const res = await client.getAll().prefix('/registry/').exec();
    const after = res.kvs.filter((kv) => Number(kv.mod_revision) > revision).map((kv) => `${kv.key.toString()}@${kv.mod_revision}`);
    return after.length ? after.slice(0, 10).join(', ') : `nothing (etcd at ${res.header.revision})`;
  } catch (err) {
    return `unknown (${(err as Error).message})`;
  } finally {
    client.close();
  }
}

function check(rec: Records, finals: FinalList[], watchers: Watcher[]): Pick<SoakResult, 'creates' | 'swaps'> {
  const creates = rec.writes.filter((w) => w.name !== 'hot');
  const swaps = rec.writes.filter((w) => w.name === 'hot');
  const unknownApplied = checkCreates(rec.violations, creates, finals);
  const finalHot = finals[0]!.items.find((o) => o.metadata.name === 'hot')?.data?.v ?? '';
  checkWatches(rec, watchers, finalHot);

  const now = performance.now();
  const history = [...rec.hot, { op: { kind: 'read' as const, value: finalHot }, invoke: now, complete: now }];
  const lin = checkCasRegister('v0', history);
  if (!lin.linearizable) rec.violations.push(`the hot object's history of ${lin.checked} operations is not linearizable`);
  const countOf = (ws: typeof creates, o: string): number => ws.filter((w) => w.outcome === o).length;
  return {
    creates: { acknowledged: countOf(creates, 'ok'), refused: countOf(creates, 'refused'), unknown: countOf(creates, 'unknown'), unknownApplied },
    swaps: {
      acknowledged: countOf(swaps, 'ok'),
      refused: countOf(swaps, 'refused'),
      unknown: countOf(swaps, 'unknown'),
      reads: rec.hot.filter((h) => h.op.kind === 'read').length,
      checked: lin.checked,
      linearizable: lin.linearizable,
    },
  };
}

/** Every acknowledged create is stored as acknowledged and no refused one exists, on every replica; returns how many unknown ones were applied. */
function checkCreates(v: string[], creates: Write[], finals: FinalList[]): number {
  let unknownApplied = 0;
  for (const [i, final] of finals.entries()) {
    const stored = new Map(final.items.map((o) => [o.metadata.name, Number(o.metadata.resourceVersion)]));
    for (const w of creates) {
      const rv = stored.get(w.name);
      if (w.outcome === 'ok' && rv !== w.rv) v.push(`replica ${i}: acknowledged create ${w.name} at ${w.rv} is ${rv === undefined ? 'lost' : `at ${rv}`}`);
      if (w.outcome === 'refused' && rv !== undefined) v.push(`replica ${i}: create ${w.name} refused with ${w.status} exists at ${rv}`);
      if (i === 0 && w.outcome === 'unknown' && rv !== undefined) unknownApplied++;
    }
  }
  return unknownApplied;
}

/**
 * No refused write appears anywhere (a read, the final state, a watch event), and every acknowledged
 * write between a watcher's list and its next relist came through that watch.
 */
function checkWatches(rec: Records, watchers: Watcher[], finalHot: string): void {
  const v = rec.violations;
  const refused = new Set(rec.writes.filter((w) => w.outcome === 'refused').map((w) => w.value ?? w.name));
  const read = rec.hot.flatMap((op) => (op.op.kind === 'read' ? [op.op.value] : []));
  for (const value of [...read, finalHot]) if (refused.has(value)) v.push(`swap to ${value} was refused, then read`);
  const acked = rec.writes.filter((w) => w.outcome === 'ok' && w.rv !== undefined);
  for (const [i, w] of watchers.entries()) {
    for (const chain of w.chains) {
      const seen = new Set(chain.events.map((e) => e.rv));
      for (const a of acked) if (a.rv! > chain.from && a.rv! <= chain.to && !seen.has(a.rv!)) v.push(`watcher ${i}: missed ${a.name} at ${a.rv} between ${chain.from} and ${chain.to}`);
      for (const e of chain.events) if (refused.has(e.name === 'hot' ? (e.value ?? '') : e.name)) v.push(`watcher ${i}: saw refused write ${e.name} ${e.value ?? ''}`);
    }
  }
}

export function formatSoakTable(r: SoakResult): string {
  const rows = [
    ['start-up seconds', String(r.startupS)],
    ['soak seconds', String(r.seconds)],
    ...FAULTS.map((f) => [`fault ${f}`, String(r.faults[f])]),
    ['faults skipped', String(r.faults.skipped)],
    ['creates acknowledged / refused / unknown (applied)', `${r.creates.acknowledged} / ${r.creates.refused} / ${r.creates.unknown} (${r.creates.unknownApplied})`],
    ['swaps acknowledged / refused / unknown', `${r.swaps.acknowledged} / ${r.swaps.refused} / ${r.swaps.unknown}`],
    ['hot history checked, linearizable', `${r.swaps.checked}, ${r.swaps.linearizable}`],
    ['watch events / relists (410) / resumes', `${r.watch.events} / ${r.watch.relists} / ${r.watch.resumes}`],
    ['replica exits', String(r.replicaExits.length)],
    ['violations', String(r.violations.length)],
  ];
  return formatTable(['soak', 'value'], rows) + (r.violations.length ? `\n${r.violations.slice(0, 20).join('\n')}` : '');
}
