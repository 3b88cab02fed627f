/**
 * A real etcd for tests and benchmarks: one member (or three, for fault tests) on free loopback
 * ports, in a temporary directory that `stop()` removes. Members can be killed (-9) and started
 * again on their data directory, and the leader found, to test failures. Needs `etcd` on PATH
 * (Debian's etcd-server; tests use describeWithTools(['etcd'])).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { procCpuMs } from './child.js';
import { freePort } from './free-port.js';

export interface EtcdMember {
  name: string;
  clientUrl: string;
  /** Whether the process is running. */
  readonly running: boolean;
  /**
   * With `pprof`: etcd's Go CPU profile over the next `seconds` (/debug/pprof/profile, gzipped
   * protobuf for `go tool pprof`).
   */
  cpuProfile(seconds: number): Promise<Buffer>;
  /** Starts the member (again) on its data directory and waits until it serves. */
  start(): Promise<void>;
  /** Kills the process (SIGKILL unless told) and waits for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** SIGSTOP (`paused`) or SIGCONT: the member keeps its connections but answers nothing meanwhile. */
  pause(paused: boolean): void;
}

export interface EtcdCluster {
  /** Client URLs of every member, for --etcd-servers. */
  endpoints: string[];
  members: EtcdMember[];
  /** The member that is leader now (waits for an election). */
  leader(): Promise<EtcdMember>;
  /** CPU time (user + system) the running members have used, in ms. */
  cpuMs(): number;
  stop(): Promise<void>;
}

export interface EtcdOptions {
  members?: number;
  /** etcd's --experimental-watch-progress-notify-interval (default 10 m in etcd). */
  progressNotifyInterval?: string;
  /** Members serve Go's profiles at /debug/pprof (etcd's --enable-pprof), for `cpuProfile`. */
  pprof?: boolean;
}

interface Status {
  header?: { member_id?: string };
  leader?: string;
}

async function status(clientUrl: string): Promise<Status | undefined> {
  try {
    const res = await fetch(`${clientUrl}/v3/maintenance/status`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(1000) });
    return res.ok ? ((await res.json()) as Status) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the etcd answering at `clientUrl` is the member with `peerUrl`: a port found free may be
 * taken by another etcd (a suite running alongside) before this one binds it, and that one answers.
 */
async function serves(clientUrl: string, peerUrl: string): Promise<boolean> {
  const id = (await status(clientUrl))?.header?.member_id;
  if (!id) return false;
  try {
    const res = await fetch(`${clientUrl}/v3/cluster/member/list`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(1000) });
    const list = res.ok ? ((await res.json()) as { members?: { ID?: string; peerURLs?: string[] }[] }) : {};
    return (list.members ?? []).some((m) => m.ID === id && m.peerURLs?.includes(peerUrl));
  } catch {
    return false;
  }
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`etcd: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A member that exited while starting: its port was taken (by another etcd, see `serves`), or worse. */
class MemberExited extends Error {}

export async function startEtcd(opts: EtcdOptions = {}): Promise<EtcdCluster> {
  // A lost port race costs a start on fresh ports, not the suite.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startCluster(opts);
    } catch (err) {
      if (!(err instanceof MemberExited) || attempt === 3) throw err;
    }
  }
}

async function startCluster(opts: EtcdOptions): Promise<EtcdCluster> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'etcd-test-'));
  const count = opts.members ?? 1;
  const ports = await Promise.all(Array.from({ length: count * 2 }, () => freePort()));
  const specs = Array.from({ length: count }, (_, i) => ({
    name: `m${i}`,
    clientUrl: `http://127.0.0.1:${ports[2 * i]}`,
    peerUrl: `http://127.0.0.1:${ports[2 * i + 1]}`,
  }));
  const initialCluster = specs.map((s) => `${s.name}=${s.peerUrl}`).join(',');

  const members = specs.map((spec): EtcdMember & { proc?: ChildProcess } => {
    const args = [
      `--name=${spec.name}`,
      `--data-dir=${path.join(dir, spec.name)}`,
      `--listen-client-urls=${spec.clientUrl}`,
      `--advertise-client-urls=${spec.clientUrl}`,
      `--listen-peer-urls=${spec.peerUrl}`,
      `--initial-advertise-peer-urls=${spec.peerUrl}`,
      `--initial-cluster=${initialCluster}`,
      '--initial-cluster-state=new',
      '--initial-cluster-token=test',
      '--logger=zap',
      '--log-level=error',
      ...(opts.progressNotifyInterval ? [`--experimental-watch-progress-notify-interval=${opts.progressNotifyInterval}`] : []),
      ...(opts.pprof ? ['--enable-pprof'] : []),
    ];
    const member: EtcdMember & { proc?: ChildProcess } = {
      ...spec,
      get running() {
        return member.proc !== undefined && member.proc.exitCode === null && member.proc.signalCode === null;
      },
      async start() {
        const log = openSync(path.join(dir, `${spec.name}.log`), 'a');
        member.proc = spawn('etcd', args, { stdio: ['ignore', log, log] });
        closeSync(log);
        await waitFor(`${spec.name} to serve`, async () => {
          if (!member.running) throw new MemberExited(`etcd: ${spec.name} exited: ${readFileSync(path.join(dir, `${spec.name}.log`), 'utf8').slice(-500)}`);
          return (await serves(spec.clientUrl, spec.peerUrl)) ? true : undefined;
        });
      },
      async kill(signal = 'SIGKILL') {
        const proc = member.proc;
        if (!proc || !member.running) return;
        const exited = new Promise((resolve) => proc.once('exit', resolve));
        // A stopped process only dies of SIGKILL; continue it so any other signal ends it.
        if (signal !== 'SIGKILL') proc.kill('SIGCONT');
        proc.kill(signal);
        await exited;
      },
      async cpuProfile(seconds) {
        const res = await fetch(`${spec.clientUrl}/debug/pprof/profile?seconds=${seconds}`, { signal: AbortSignal.timeout((seconds + 30) * 1000) });
        if (!res.ok) throw new Error(`etcd: ${spec.name}'s CPU profile: HTTP ${res.status}`);
        return Buffer.from(await res.arrayBuffer());
      },
      pause(paused) {
        if (member.running) member.proc!.kill(paused ? 'SIGSTOP' : 'SIGCONT');
      },
    };
    return member;
  });

  const leader = async (): Promise<EtcdMember> =>
    waitFor('a leader', async () => {
      for (const m of members.filter((x) => x.running)) {
        const s = await status(m.clientUrl);
        if (s?.leader && s.leader !== '0' && s.leader === s.header?.member_id) return m;
      }
      return undefined;
    });

  const stop = async (): Promise<void> => {
    // Killed, not stopped: the data goes next, and three members stopping together each wait out a
    // leadership transfer to members that are stopping too (7.5 s against 0.3 s here).
    await Promise.all(members.map((m) => m.kill()));
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await Promise.all(members.map((m) => m.start()));
    await leader();
  } catch (err) {
    await stop();
    throw err;
  }
  const cpuMs = (): number => members.reduce((sum, m) => sum + (m.running && m.proc?.pid ? procCpuMs(m.proc.pid) : 0), 0);
  return { endpoints: specs.map((s) => s.clientUrl), members, leader, cpuMs, stop };
}
