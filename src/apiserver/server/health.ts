/**
 * /healthz, /livez and /readyz as kube-apiserver serves them: `ok` when every check passes, else
 * HTTP 500 listing each check (`[+]ping ok`, `[-]etcd failed: reason withheld`). The storage check
 * (etcd: a quorum read with a 2 s deadline) is part of /healthz and /readyz, and of /readyz/etcd;
 * /livez only says the process serves, so a replica is taken out of rotation while etcd is down
 * rather than restarted, which would not bring etcd back. Further checks (`kms-providers`) join
 * /healthz and /readyz the same way; a single check's own path (/readyz/etcd, /readyz/kms-providers)
 * gives its reason, as upstream's does (for etcd: the members that do not answer). `?verbose` lists
 * every check even when all pass, ending `readyz check passed`. Each `?exclude=NAME` skips that check
 * (`[+]NAME excluded: ok`), and names matching no check get a `warn:` line, as upstream's handler.
 */
import type { Store } from '../storage/store.js';

export interface HealthCheck {
  name: string;
  /** Rejects with the reason when the check fails. */
  check(): Promise<void>;
}

interface CheckResult {
  name: string;
  ok: boolean;
  excluded?: boolean;
  reason?: string;
}

export function isHealthPath(path: string): boolean {
  return path === '/healthz' || path === '/livez' || path === '/readyz' || /^\/(healthz|livez|readyz)\//.test(path);
}

/** The checks an endpoint runs: /livez only says the process serves. */
function checksOf(endpoint: string, store: Store, extra: HealthCheck[]): [string, () => Promise<void>][] {
  const checks: [string, () => Promise<void>][] = [['ping', async () => undefined]];
  if (endpoint === 'livez') return checks;
  if (store.checkHealth) checks.push(['etcd', () => store.checkHealth!()]);
  for (const c of extra) checks.push([c.name, () => c.check()]);
  return checks;
}

async function run(name: string, check: () => Promise<void>): Promise<CheckResult> {
  try {
    await check();
    return { name, ok: true };
  } catch (err) {
    return { name, ok: false, reason: err instanceof Error ? err.message : String(err) };
  }
}

/** A check's line; the reason is withheld, as these endpoints are public. */
function resultLine(r: CheckResult): string {
  if (!r.ok) return `[-]${r.name} failed: reason withheld`;
  return r.excluded ? `[+]${r.name} excluded: ok` : `[+]${r.name} ok`;
}

/** The status code and body of a health endpoint. */
export async function health(
  path: string,
  store: Store,
  extra: HealthCheck[] = [],
  verbose = false,
  exclude: readonly string[] = [],
): Promise<{ status: number; body: string }> {
  const [, endpoint = '', only] = path.split('/');
  const checks = checksOf(endpoint, store, extra);
  const selected = only === undefined ? checks : checks.filter(([name]) => name === only);
  if (selected.length === 0) return { status: 404, body: '404 page not found\n' };
  // A single check's own path serves it whatever is excluded, as upstream's.
  const excluded = new Set(only === undefined ? exclude : []);
  const results = await Promise.all(selected.map(([name, check]): Promise<CheckResult> | CheckResult => (excluded.has(name) ? { name, ok: true, excluded: true } : run(name, check))));
  const lines = results.map(resultLine);
  const unmatched = [...excluded].filter((name) => !selected.some(([n]) => n === name)).sort();
  if (unmatched.length > 0) lines.push(`warn: some health checks cannot be excluded: no matches for ${unmatched.map((n) => JSON.stringify(n)).join(',')}`);
  if (results.every((r) => r.ok)) return { status: 200, body: verbose ? `${lines.join('\n')}\n${endpoint} check passed\n` : 'ok' };
  const [alone] = results;
  if (only !== undefined && alone) return { status: 500, body: `internal server error: ${alone.reason}\n` };
  return { status: 500, body: `${lines.join('\n')}\n${endpoint} check failed\n` };
}
