/**
 * The `up` a fleet bench runs against: started as a child on a data directory and port, the moment its
 * port takes connections again after a stop, and the host's CPU pressure (bench/fleet.ts).
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { projectScript, spawnNode, waitUntil, type NodeProcess } from './child.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface Up {
  proc: NodeProcess;
  url: string;
}

export async function startUp(dataDir: string, port: number, cpuProfDir?: string): Promise<Up> {
  let out = '';
  const proc = spawnNode(projectScript('src/cmd/main'), ['up', '--data-dir', dataDir, '--port', String(port), '--metrics-bind-address', '127.0.0.1:0', '--storage', 'sqlite', '--log-level', 'warn'], {
    onStdout: (line) => (out += `${line}\n`),
    ...(cpuProfDir ? { execArgv: ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] } : {}),
  });
  try {
    await waitUntil('kube-identity up', () => (out.includes('Press Ctrl-C to stop.') ? true : undefined), 120_000, proc);
  } catch (err) {
    await proc.stop(10_000);
    throw err;
  }
  return { proc, url: `https://127.0.0.1:${port}` };
}

/**
 * When (performance.now()) `port` first took a TCP connection, polled every 50 ms from now on, and
 * `sample()` then; `stop` resolves with both (taken at the stop if it never did). The connection is
 * closed at once, before any TLS: the new up closes it unread.
 */
export function listeningAgain(port: number, sample: () => number): { stop(): Promise<{ at: number; sampled: number }> } {
  let seen: { at: number; sampled: number } | undefined;
  let stopped = false;
  const poll = (): Promise<void> =>
    new Promise((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        seen ??= { at: performance.now(), sampled: sample() };
        socket.destroy();
        resolve();
      });
      socket.once('error', () => resolve());
    });
  const polling = (async () => {
    while (seen === undefined && !stopped) {
      await poll();
      if (seen === undefined) await sleep(50);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await polling;
      return seen ?? { at: performance.now(), sampled: sample() };
    },
  };
}

/** Microseconds some task waited for a CPU since boot (PSI); 0 where the kernel does not report it. */
export function cpuStallUs(): number {
  try {
    return Number(/^some .*total=(\d+)/m.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
