/**
 * /healthz, /livez and /readyz as kube-apiserver serves them: `ok` when every check passes, else
 * HTTP 500 listing each check (`[+]ping ok`, `[-]etcd failed: reason withheld`). The storage check
 * (etcd: a quorum read with a 2 s deadline) is part of /healthz and /readyz, and of /readyz/etcd;
 * /livez only says the process serves, so a replica is taken out of rotation while etcd is down
 * rather than restarted, which would not bring etcd back. Further checks (`kms-providers`) join
 * /healthz and /readyz the same way; a single check's own path (/readyz/etcd, /readyz/kms-providers)
 * gives its reason, as upstream's does (for etcd: the members that do not answer). `?verbose` lists
 * every check even when all pass, ending `readyz check passed`.
 */
import type { Store } from '../storage/store.js';

export interface HealthCheck {
  name: string;
  /** Rejects with the reason when the check fails. */
  check(): Promise<void>;
}

export function isHealthPath(path: string): boolean {
  return path === '/healthz' || path === '/livez' || path === '/readyz' || /^\/(healthz|livez|readyz)\//.test(path);
}

/** The status code and body of a health endpoint. */
export async function health(path: string, store: Store, extra: HealthCheck[] = [], verbose = false): Promise<{ status: number; body: string }> {
  const [, endpoint = '', only] = path.split('/');
  const checks: [string, () => Promise<void>][] = [['ping', async () => undefined]];
  if (endpoint !== 'livez' && store.checkHealth) checks.push(['etcd', () => store.checkHealth!()]);
  if (endpoint !== 'livez') for (const c of extra) checks.push([c.name, () => c.check()]);
  const selected = only === undefined ? checks : checks.filter(([name]) => name === only);
  if (selected.length === 0) return { status: 404, body: '404 page not found\n' };
  const results = await Promise.all(
    selected.map(async ([name, check]) => {
      try {
        await check();
        return { name, ok: true };
      } catch (err) {
        return { name, ok: false, reason: err instanceof Error ? err.message : String(err) };
      }
    }),
  );
  const lines = results.map((r) => (r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`));
  if (results.every((r) => r.ok)) return { status: 200, body: verbose ? `${lines.join('\n')}\n${endpoint} check passed\n` : 'ok' };
  const [alone] = results;
  if (only !== undefined && alone) return { status: 500, body: `internal server error: ${alone.reason}\n` };
  return { status: 500, body: `${lines.join('\n')}\n${endpoint} check failed\n` };
}
