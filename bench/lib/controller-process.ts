/**
 * `kube-identity controller` in a child process against a kubeconfig, with signing enabled and
 * leader election off; its /metrics (on a port picked here) tells the bench when the informers
 * synced, when the queues drained, and how many API requests it made.
 */
import { projectScript, spawnNode, waitUntil, type NodeProcess } from './child.js';
import { freePort } from './free-port.js';

export interface ControllerProcess {
  proc: NodeProcess;
  /** The current Prometheus text exposition ('' when unreachable). */
  metrics(): Promise<string>;
  close(): Promise<void>;
}

export interface ControllerProcessOptions {
  kubeconfig: string;
  caCertFile: string;
  caKeyFile: string;
  execArgv?: string[];
  /** Extra controller flags (workers...). */
  args?: string[];
}

/** Starts the controller and waits until /readyz answers 200 (informers synced). */
export async function startControllerProcess(o: ControllerProcessOptions): Promise<ControllerProcess> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const proc = spawnNode(
    projectScript('src/cmd/main'),
    [
      'controller',
      '--kubeconfig', o.kubeconfig,
      '--leader-elect=false',
      '--metrics-bind-address', `127.0.0.1:${port}`,
      '--log-level', 'warn',
      '--cluster-signing-cert-file', o.caCertFile,
      '--cluster-signing-key-file', o.caKeyFile,
      ...(o.args ?? []),
    ],
    { execArgv: o.execArgv },
  );
  const metrics = (): Promise<string> => fetch(`${base}/metrics`).then((r) => r.text(), () => '');
  try {
    await waitUntil('the controller to be ready', () => fetch(`${base}/readyz`).then((r) => (r.status === 200 ? true : undefined), () => undefined), 180_000, proc);
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { proc, metrics, close: () => proc.stop() };
}

/** Sum of every sample of `name` in a Prometheus text exposition, optionally only lines containing `filter`. */
export function metricSum(text: string, name: string, filter = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if ((line.startsWith(`${name}{`) || line.startsWith(`${name} `)) && line.includes(filter)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Largest single sample of `name`. */
export function metricMax(text: string, name: string): number {
  let max = 0;
  for (const line of text.split('\n')) if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) max = Math.max(max, Number(line.slice(line.lastIndexOf(' ') + 1)));
  return max;
}
