/**
 * Child processes for the benchmarks: the real `kube-identity` binary (server, controller) and the
 * bench's own helper scripts, each in its own process so its CPU and peak RSS are its own. Built
 * (dist/bench/lib/*.js) they run as plain node scripts; from source (the jest smoke tests) they run
 * through the project's TypeScript loader hooks.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const FROM_SOURCE = import.meta.url.endsWith('.ts');
const EXT = FROM_SOURCE ? '.ts' : '.js';
/** The project root (source) or dist/ (built): the directory holding src/ and bench/. */
const ROOT = new URL('../../', import.meta.url);

/** Absolute path of a project script given without extension, e.g. 'src/cmd/main'. */
export function projectScript(rel: string): string {
  return fileURLToPath(new URL(rel + EXT, ROOT));
}

export function nodeArgs(): string[] {
  return FROM_SOURCE ? ['--import', fileURLToPath(new URL('test/helpers/register-ts.mjs', ROOT))] : [];
}

export interface NodeProcess {
  readonly pid: number;
  readonly child: ChildProcess;
  /** Last lines of stderr, for error messages. */
  stderrTail(): string;
  /** Resident set now, and its peak so far (VmHWM), in bytes; 0 once the process is gone. */
  memory(): { rss: number; peakRss: number };
  /** User + system CPU time used so far, in ms (0 once the process is gone). */
  cpuMs(): number;
  /** The same for its main thread alone (the event loop, with the native TLS work it runs). */
  mainThreadCpuMs(): number;
  /** The same for its threads named `name` (/proc/PID/task/TID/comm; up's controller thread is `controller`). */
  threadCpuMs(name: string): number;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it exited. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  env?: NodeJS.ProcessEnv;
  /** Extra node flags (e.g. --cpu-prof). */
  execArgv?: string[];
  /** Called with each stdout line. */
  onStdout?: (line: string) => void;
}

export function spawnNode(script: string, args: string[], opts: SpawnOptions = {}): NodeProcess {
  const child = spawn(process.execPath, [...nodeArgs(), ...(opts.execArgv ?? []), script, ...args], {
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (tail = (tail + d).slice(-4000)));
  let pending = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    pending += d;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      opts.onStdout?.(line);
    }
  });
  return handle(child, () => tail);
}

function handle(child: ChildProcess, stderrTail: () => string): NodeProcess {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid ?? 0;
  return {
    pid,
    child,
    stderrTail,
    memory: () => procMemory(pid),
    cpuMs: () => procCpuMs(pid),
    mainThreadCpuMs: () => procCpuMs(pid, pid),
    threadCpuMs: (name) => procThreadsCpuMs(pid, name),
    async stop(graceMs = 5000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A project script that talks over an IPC channel (structured-clone messages) instead of stdout. */
export function forkNode(script: string, args: string[] = []): NodeProcess {
  const child = fork(script, args, { execArgv: nodeArgs(), stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' });
  let tail = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (tail = (tail + d).slice(-4000)));
  return handle(child, () => tail);
}

/** VmRSS and VmHWM from /proc (Linux), in bytes. */
export function procMemory(pid: number): { rss: number; peakRss: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { rss: kb('VmRSS'), peakRss: kb('VmHWM') };
  } catch {
    return { rss: 0, peakRss: 0 };
  }
}

/** utime + stime from /proc/PID/stat, or of thread TID (/proc/PID/task/TID/stat), in ms (Linux: 100 Hz ticks). */
export function procCpuMs(pid: number, tid?: number): number {
  try {
    const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start at state, field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** The CPU time of PID's threads named `name`, summed, in ms (0 when there are none). */
function procThreadsCpuMs(pid: number, name: string): number {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  const named = (tid: string): boolean => {
    try {
      return readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() === name;
    } catch {
      return false; // the thread ended meanwhile
    }
  };
  return tids.filter(named).reduce((sum, tid) => sum + procCpuMs(pid, Number(tid)), 0);
}

/** Polls `cond` every 50 ms until it returns a value; fails after `timeoutMs` or when `proc` exits. */
export async function waitUntil<T>(what: string, cond: () => T | undefined | Promise<T | undefined>, timeoutMs: number, proc?: NodeProcess): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await cond();
    if (v !== undefined) return v;
    if (proc && (proc.child.exitCode !== null || proc.child.signalCode !== null)) {
      throw new Error(`${what}: process exited (${proc.child.exitCode ?? proc.child.signalCode}): ${proc.stderrTail()}`);
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${proc ? `: ${proc.stderrTail()}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
