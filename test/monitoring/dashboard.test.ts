/**
 * The Grafana dashboard (charts/kube-identity/dashboards/kube-identity.json) against a real Prometheus
 * scraping real controllers (bench/lib/monitored-run.ts): `kube-identity up` (API server + controller) and
 * a second controller with leader election, as the chart's Deployment runs it. After the demo (a node
 * joins), a client CSR the signer refuses, one left for a human to approve and a serving CSR the serving
 * approver's policy refuses, every panel's PromQL is evaluated through Prometheus' HTTP API and must
 * return series: a renamed metric or a broken query fails here. The dashboard picture's renderer
 * (bench/dashboard.ts) then draws every panel from range queries over the same run.
 */
import { dashboardSvg } from '../../bench/lib/dashboard-svg.js';
import { grafanaExpr, queryPanels, readDashboard } from '../../bench/lib/grafana.js';
import { CSR_PATH, KUBELET_CLIENT_SIGNER, createBootstrapToken, kubeletCsrObject, kubeletCsrPems } from '../../bench/lib/kubelet-csr.js';
import { CLIENT_SIGNER, SERVING_SIGNER, startMonitoredRun, type MonitoredRun } from '../../bench/lib/monitored-run.js';
import { DASHBOARD_FILE, emptyPanels } from '../../bench/dashboard.js';
import { SERVING_RULES } from '../../src/controller/serving-approver/serving-policy.js';
import { describeWithTools } from '../helpers/tools.js';

const dashboard = readDashboard(DASHBOARD_FILE);
const targets = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, refId: t.refId, expr: t.expr })));

describeWithTools(['prometheus'])('the dashboard on a real Prometheus', () => {
  let run: MonitoredRun | undefined;
  let started = 0;
  const prom = () => {
    if (!run) throw new Error('the run did not start');
    return run.prom;
  };
  /** What Grafana substitutes: the job, and a rate window of a few scrapes. */
  const substitute = (expr: string): string => grafanaExpr(expr, { job: run?.job ?? '', rateInterval: '10s' });

  /** Resolves once every expression returns series (polling Prometheus as it scrapes). */
  async function waitForSeries(exprs: string[]): Promise<void> {
    for (let i = 0; i < 300; i++) {
      const counts = await Promise.all(exprs.map((e) => prom().query(e).then((r) => r.length)));
      if (counts.every((n) => n > 0)) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`no series yet for ${exprs.join(', ')}`);
  }

  beforeAll(async () => {
    started = Math.floor(Date.now() / 1000);
    run = await startMonitoredRun();
    const r = run;
    // A node joins (client and serving certificates); a client CSR asks for server auth (the signer marks it Failed once approved); another
    // waits for a human; the admin, who is no node, asks for a kubelet serving certificate (the serving
    // approver's `requester` rule leaves it pending).
    const demo = r.demo('dashboard-node');
    await r.createCsr('asks-for-server-auth', CLIENT_SIGNER, ['digital signature', 'server auth'], { commonName: 'alice' });
    await r.approve('asks-for-server-auth');
    await r.createCsr('waits-for-a-human', CLIENT_SIGNER, ['digital signature', 'client auth'], { commonName: 'bob' });
    const node = { commonName: 'system:node:dashboard-node', organizations: ['system:nodes'] };
    await r.createCsr('serving-not-from-a-node', SERVING_SIGNER, ['digital signature', 'server auth'], node);
    await demo;
    // Kubelet client CSRs a scrape apart: a signer's first issuance creates its latency histogram series, whose
    // first sample rate() cannot see as an increase, and the demo's two client certificates may share a scrape.
    const bootstrap = r.admin.withToken(await createBootstrapToken(r.admin));
    const [pem = ''] = await kubeletCsrPems(1);
    // Only once Prometheus is scraping the signer's series (they start at 0) can it see these as increases.
    const issuances = `sum(kube_identity_csr_issuance_latency_seconds_count{signer="${KUBELET_CLIENT_SIGNER}"})`;
    await waitForSeries([issuances]);
    for (let i = 1; i <= 3; i++) {
      await bootstrap.json('POST', CSR_PATH, kubeletCsrObject(`kubelet-${i}`, pem));
      // Scraped (after the demo's two) before the next one is asked for: no two of them share a scrape.
      await waitForSeries([`${issuances} >= ${2 + i}`]);
    }
    bootstrap.close();
    // The decision series exist from the start at 0, so wait for the counts themselves: the demo's two kubelet
    // client certificates and the three above issued, a CSR failed, one refused by policy.
    await waitForSeries([
      `sum(kube_identity_csr_issuance_latency_seconds_count{signer="${KUBELET_CLIENT_SIGNER}"}) >= 5`,
      'kube_identity_csr_failures_total > 0',
      'kube_identity_csr_oldest_pending_age_seconds',
      'kube_identity_csr_policy_violations_total > 0',
      'leader_election_master_status == 1',
    ]);
    // A few more scrapes, so that every rate window holds two samples of each series.
    await new Promise((res) => setTimeout(res, 3_000));
  }, 150_000);

  afterAll(async () => {
    await run?.close();
  });

  it('reads only metrics each controller exports: `up` alone has every one', async () => {
    const read = new Set(targets.flatMap((t) => [...t.expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g)].map((m) => m[1] ?? '')));
    expect(read.size).toBeGreaterThan(15);
    const missing: string[] = [];
    for (const url of run?.metricsUrls ?? []) {
      const text = await fetch(url).then((r) => r.text());
      // A metric exists once it has a sample: a labelled one with no series yet prints only its HELP and TYPE.
      const sampled = new Set([...text.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/gm)].map((m) => m[1] ?? ''));
      const exported = (name: string): boolean => sampled.has(name) || ['_bucket', '_sum', '_count'].some((s) => sampled.has(`${name}${s}`));
      missing.push(...[...read].filter((name) => !exported(name)).map((name) => `${url}: ${name}`));
    }
    expect(run?.metricsUrls.length).toBe(2);
    expect(missing).toEqual([]);
  });

  it('returns series for every panel query', async () => {
    expect(targets.length).toBeGreaterThan(15);
    const empty: string[] = [];
    for (const t of targets) if ((await prom().query(substitute(t.expr))).length === 0) empty.push(`${t.panel} ${t.refId}: ${t.expr}`);
    expect(empty).toEqual([]);
  });

  it('shows the decisions that happened, the pending CSR and the leader', async () => {
    const query = (title: string) => prom().query(substitute(targets.find((t) => t.panel === title)?.expr ?? 'missing'));
    const decisions = await query('CSR decisions by signer');
    const happened = [
      'approved kubernetes.io/kube-apiserver-client-kubelet',
      'issued kubernetes.io/kube-apiserver-client-kubelet',
      'approved kubernetes.io/kubelet-serving',
      'issued kubernetes.io/kubelet-serving',
      'failed kubernetes.io/kube-apiserver-client',
    ];
    const shown = new Map(decisions.map((s) => [`${s.metric.decision} ${s.metric.signer}`, Number(s.value[1])]));
    expect(happened.filter((d) => !shown.has(d))).toEqual([]);
    // Each signer's series start at 0, so a decision that never happened is a flat 0 line, not a gap.
    expect([...shown].filter(([d, rate]) => !happened.includes(d) && rate !== 0)).toEqual([]);
    // Every signer a controller serves has an oldest-pending series (0 with nothing pending) and every rule a
    // violation series from 0: only the two CSRs left waiting and the one refusal are above it.
    const nonZero = (series: { metric: Record<string, string>; value: [number, string] }[], label: (m: Record<string, string>) => string): string[] =>
      series.filter((s) => Number(s.value[1]) > 0).map((s) => label(s.metric)).sort();
    const pending = await query('Oldest pending CSR');
    expect(pending.map((s) => s.metric.signer)).toContain(KUBELET_CLIENT_SIGNER);
    expect(nonZero(pending, (m) => m.signer ?? '')).toEqual(['kubernetes.io/kube-apiserver-client', 'kubernetes.io/kubelet-serving']);
    // The panel draws rates, long back to 0 for a refusal made before the demo: the counters say which rule was broken.
    expect((await query('Policy violations by rule')).map((s) => s.metric.rule).sort()).toEqual([...SERVING_RULES].sort());
    const violations = await prom().query('sum by (signer, rule) (kube_identity_csr_policy_violations_total)');
    expect(nonZero(violations, (m) => `${m.signer} ${m.rule}`)).toEqual(['kubernetes.io/kubelet-serving requester']);
    expect((await query('Leader')).some((s) => s.value[1] === '1')).toBe(true);
    const expiresIn = (await query('Signer CA expires in')).map((s) => Number(s.value[1]));
    expect(expiresIn.length).toBeGreaterThan(0);
    for (const seconds of expiresIn) expect(seconds).toBeGreaterThan(30 * 86400);
  });

  it('lists the scraped job in the dashboard job variable', async () => {
    const variable = dashboard.templating.list.find((v) => v.name === 'job');
    expect(variable?.definition).toBe('label_values(kube_identity_build_info, job)');
    expect(await prom().labelValues('job', 'kube_identity_build_info')).toEqual([run?.job]);
  });

  it('draws every panel from range queries over the run (the dashboard picture, bench/dashboard.ts)', async () => {
    const range = { start: started, end: Math.floor(Date.now() / 1000), step: 1 };
    const panels = await queryPanels(prom(), dashboard, range, { job: run?.job ?? '', rateInterval: '10s' });
    expect(emptyPanels(panels)).toEqual([]);
    const svg = dashboardSvg(dashboard.title, panels, range, ['test']);
    const drawn = [...svg.matchAll(/<g class="panel" data-type="(\w+)" data-title="([^"]+)" data-series="(\d+)">(.*?)<\/g>/g)];
    const shown = dashboard.panels.filter((p) => p.type !== 'row');
    expect(drawn.map((m) => m[2])).toEqual(shown.map((p) => p.title));
    for (const [, type, title, count, body = ''] of drawn) {
      // Each series the queries returned is drawn: a line through its samples, or its last value.
      if (type === 'stat') {
        const values = [...body.matchAll(/class="stat-value"[^>]*>([^<]+)</g)].map((m) => m[1] ?? '');
        expect([title, values.length, values.every((v) => /\d/.test(v))]).toEqual([title, Number(count), true]);
      } else {
        const points = [...body.matchAll(/class="series" data-points="(\d+)"/g)].map((m) => Number(m[1]));
        expect([title, points.length, points.some((n) => n >= 2)]).toEqual([title, Number(count), true]);
      }
    }
  });
});
