/**
 * docs/dashboard.svg (and .png where Debian's `chromium` is installed): the Grafana dashboard
 * (charts/kube-identity/dashboards/kube-identity.json) drawn from a real run, since Grafana is not
 * installable here. A real Prometheus scrapes `kube-identity up` and a leader-electing controller
 * (lib/monitored-run.ts) while load runs: kubelet client CSRs from bootstrap-token clients at a rate
 * that changes every third of the run, kubelets joining through `kube-identity demo`, client CSRs
 * asking for server auth (approved, then marked Failed by the signer), CSRs left for a human, and
 * serving CSRs from a non-node (refused by the serving approver's policy). Then every panel's PromQL
 * runs as a range query over the run and the panels are drawn in the dashboard's grid. Nothing is
 * drawn by hand: a panel with no series stops the script.
 * Run: `npm run build && node dist/bench/dashboard.js [--seconds=150] [--out=docs]`.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { dashboardSvg } from './lib/dashboard-svg.js';
import { queryPanels, readDashboard, type PanelData, type Range } from './lib/grafana.js';
import { CSR_PATH, createBootstrapToken, kubeletCsrObject, kubeletCsrPems } from './lib/kubelet-csr.js';
import { openLoop } from './lib/load.js';
import { CLIENT_SIGNER, SERVING_SIGNER, startMonitoredRun, type MonitoredRun } from './lib/monitored-run.js';
import { parseBenchArgs } from './lib/cli.js';
import { isMain } from './lib/report.js';

export const DASHBOARD_FILE = 'charts/kube-identity/dashboards/kube-identity.json';
/** Grafana's $__rate_interval for a 1 s scrape is 4 s; a wider window keeps a picture of a few minutes readable. */
const RATE_INTERVAL = '15s';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Sent {
  ok: number;
  failed: number;
  firstError?: string;
}

/** Every `everyMs` until `deadline`, `op(i)`; failures are counted, not thrown (they show on the dashboard). */
async function every(everyMs: number, deadline: number, op: (i: number) => Promise<void>): Promise<Sent> {
  const sent: Sent = { ok: 0, failed: 0 };
  for (let i = 0; Date.now() < deadline; i++) {
    await op(i).then(
      () => void sent.ok++,
      (err: unknown) => {
        sent.failed++;
        sent.firstError ??= String(err);
      },
    );
    await sleep(everyMs);
  }
  return sent;
}

/** Kubelet client CSRs from a bootstrap token at 1, 4, then 2 per second, a third of the time each. */
async function kubeletClients(run: MonitoredRun, seconds: number): Promise<Sent> {
  const bootstrap = run.admin.withToken(await createBootstrapToken(run.admin));
  const pems = await kubeletCsrPems(32);
  const sent: Sent = { ok: 0, failed: 0 };
  let n = 0;
  const op = async (): Promise<void> => {
    const i = n++;
    await bootstrap.json('POST', CSR_PATH, kubeletCsrObject(`kubelet-${i}`, pems[i % pems.length] ?? ''));
  };
  for (const rate of [1, 4, 2]) {
    const r = await openLoop({ ratePerSec: rate, durationMs: (seconds * 1000) / 3, op });
    sent.ok += r.ok;
    sent.failed += r.errors;
    sent.firstError ??= r.firstError;
  }
  bootstrap.close();
  return sent;
}

/** The load described above, for `seconds`; returns what was sent, by kind. */
async function load(run: MonitoredRun, seconds: number): Promise<Record<string, Sent>> {
  const deadline = Date.now() + seconds * 1000;
  const node = { commonName: 'system:node:not-a-node', organizations: ['system:nodes'] };
  const [kubeletCsrs, kubeletsJoined, serverAuth, forAHuman, servingFromNonNode] = await Promise.all([
    kubeletClients(run, seconds),
    every(20_000, deadline, (i) => run.demo(`demo-node-${i}`, `10.244.0.${10 + i}`)),
    every(10_000, deadline, async (i) => {
      await run.createCsr(`asks-for-server-auth-${i}`, CLIENT_SIGNER, ['digital signature', 'server auth'], { commonName: `alice-${i}` });
      await run.approve(`asks-for-server-auth-${i}`);
    }),
    every(25_000, deadline, (i) => run.createCsr(`waits-for-a-human-${i}`, CLIENT_SIGNER, ['digital signature', 'client auth'], { commonName: `bob-${i}` })),
    every(15_000, deadline, (i) => run.createCsr(`serving-not-from-a-node-${i}`, SERVING_SIGNER, ['digital signature', 'server auth'], node)),
  ]);
  return { kubeletCsrs, kubeletsJoined, serverAuth, forAHuman, servingFromNonNode };
}

/** What the load sent, in words, for the picture's footnote. */
const describeLoad = (s: Record<string, Sent>): string[] => [
  `${s.kubeletCsrs?.ok} kubelet client CSRs from a bootstrap token (1, 4, then 2 per second); ${s.kubeletsJoined?.ok} kubelets joined by \`kube-identity demo\` (client and serving certificates, ${s.kubeletsJoined?.failed} runs failed);`,
  `${s.serverAuth?.ok} client CSRs asking for server auth, approved by the admin (the signer marks them Failed); ${s.forAHuman?.ok} client CSRs left for a human; ${s.servingFromNonNode?.ok} serving CSRs from the admin (the serving approver's requester rule refuses them).`,
  "Both controllers act on every CSR (up's runs without leader election), so one of each pair of writes meets a 409 Conflict and is requeued: the PUT 409 and retry lines. With leader election one replica acts.",
];

/** The panels with no series at all: a picture with such a panel is not made. */
export const emptyPanels = (panels: PanelData[]): string[] => panels.filter((p) => p.panel.type !== 'row' && p.series.length === 0).map((p) => p.panel.title);

/** Headless Chromium's screenshot of the SVG at its own size; false when Debian's `chromium` is not installed. */
function png(svgFile: string, pngFile: string, width: number, height: number): boolean {
  const flags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--hide-scrollbars'];
  try {
    execFileSync('chromium', [...flags, `--screenshot=${path.resolve(pngFile)}`, `--window-size=${width},${height}`, pathToFileURL(path.resolve(svgFile)).href], { stdio: 'ignore', timeout: 120_000 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

async function main(argv: string[]): Promise<void> {
  const args = parseBenchArgs(argv, {
    command: 'bench/dashboard',
    usage: 'usage: node dist/bench/dashboard.js [--seconds=S] [--out=DIR]\nDraws the Grafana dashboard from a real Prometheus scraping up under S seconds of load (default 150) into DIR/dashboard.svg and .png (default docs).',
    options: { seconds: { type: 'string' }, out: { type: 'string' } },
  });
  const seconds = args.number('seconds', { min: 1 }) ?? 150;
  const out = args.string('out') ?? 'docs';
  const dashboard = readDashboard(DASHBOARD_FILE);
  const run = await startMonitoredRun();
  try {
    const start = Math.floor(Date.now() / 1000);
    const sent = await load(run, seconds);
    // The rate windows and the last scrapes catch up with the end of the load.
    await sleep(20_000);
    const range: Range = { start, end: Math.floor(Date.now() / 1000), step: 2 };
    const panels = await queryPanels(run.prom, dashboard, range, { job: run.job, rateInterval: RATE_INTERVAL });
    const empty = emptyPanels(panels);
    if (empty.length > 0) throw new Error(`no series for ${empty.join(', ')}: no picture made`);
    const notes = [
      `Drawn by bench/dashboard.ts from range queries (step ${range.step} s, $__rate_interval ${RATE_INTERVAL}) to a real Prometheus scraping kube-identity up and a leader-electing controller every second, during:`,
      ...describeLoad(sent),
    ];
    const svg = dashboardSvg(dashboard.title, panels, range, notes);
    const svgFile = path.join(out, 'dashboard.svg');
    writeFileSync(svgFile, svg);
    const [, width, height] = /width="(\d+)" height="(\d+)"/.exec(svg) ?? [];
    const pngMade = png(svgFile, path.join(out, 'dashboard.png'), Number(width), Number(height));
    console.log(JSON.stringify({ name: 'dashboard', seconds, range, sent, png: pngMade, series: Object.fromEntries(panels.filter((p) => p.panel.type !== 'row').map((p) => [p.panel.title, p.series.length])) }));
  } finally {
    await run.close();
  }
}

if (isMain(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
