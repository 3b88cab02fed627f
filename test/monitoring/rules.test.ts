/**
 * The alert rules (charts/kube-identity/rules/kube-identity.rules.yaml, the PrometheusRule's spec) pass
 * `promtool check rules`; the `promtool test rules` cases in kube-identity.rules.test.yaml show every
 * alert firing on an unhealthy series and quiet on a healthy one; every alert carries a summary, a
 * description and a runbook_url naming a section of docs/runbook.md; the runbook has a section for each alert
 * and no other, and it, the alert's own text and docs/observability.md's "Observe it" state the threshold the rule uses.
 */
import { execFile } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { describeWithTools } from '../helpers/tools.js';

const run = promisify(execFile);
const RULES = path.join(process.cwd(), 'charts/kube-identity/rules/kube-identity.rules.yaml');
const TESTS = path.join(process.cwd(), 'test/monitoring/kube-identity.rules.test.yaml');
const RUNBOOK_URL = 'https://github.com/kube-identity/kube-identity/blob/main/docs/runbook.md#';

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  annotations?: Record<string, string>;
}
interface RuleTest {
  alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[];
}

const alerts = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);

/** docs/runbook.md's `## ` sections: heading -> text. */
function runbookSections(): Map<string, string> {
  const sections = new Map<string, string>();
  for (const part of readFileSync('docs/runbook.md', 'utf8').split(/^## /m).slice(1)) {
    const nl = part.indexOf('\n');
    sections.set(part.slice(0, nl).trim(), part.slice(nl + 1));
  }
  return sections;
}

/** docs/observability.md's "Observe it" section. */
function observeIt(): string {
  const readme = readFileSync('docs/observability.md', 'utf8');
  const start = readme.indexOf('\n## Observe it\n');
  expect(start).toBeGreaterThan(0);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** Each alert's threshold, as its rule writes it (in `expr` or `for`) and as the docs say it. */
const THRESHOLDS: Record<string, { rule: RegExp; says: string }> = {
  KubeIdentityCSRPendingTooLong: { rule: /> 15 \* 60$/, says: '15 minutes' },
  KubeIdentitySignerCAExpiringSoon: { rule: /< 30 \* 24 \* 3600$/, says: '30 days' },
  KubeIdentitySignerCAExpiryCritical: { rule: /< 7 \* 24 \* 3600$/, says: '7 days' },
  KubeIdentityReconcileErrorsHigh: { rule: /> 0\.1$/, says: '10%' },
  KubeIdentityNoLeader: { rule: /^for 5m$/, says: '5 minutes' },
  KubeIdentityInformerStale: { rule: /> 10 \* 60$/, says: '10 minutes' },
  KubeIdentityCertificatesFailing: { rule: /offset 15m[\s\S]*\[15m\]\)\s*\) > 0$/, says: '15 minutes' },
  KubeIdentityPodCertificatesFailing: { rule: /offset 15m[\s\S]*\[15m\]\)\s*\) > 0$/, says: '15 minutes' },
};

it('defines the alerts an on-call engineer acts on, each with a summary, a description and its runbook section', () => {
  expect(alerts.map((a) => a.alert)).toEqual([
    'KubeIdentityCSRPendingTooLong',
    'KubeIdentitySignerCAExpiringSoon',
    'KubeIdentitySignerCAExpiryCritical',
    'KubeIdentityReconcileErrorsHigh',
    'KubeIdentityNoLeader',
    'KubeIdentityInformerStale',
    'KubeIdentityCertificatesFailing',
    'KubeIdentityPodCertificatesFailing',
  ]);
  const sections = [...runbookSections().keys()].map((h) => h.toLowerCase());
  for (const a of alerts) {
    expect(Object.keys(a.annotations ?? {}).sort()).toEqual(['description', 'runbook_url', 'summary']);
    expect(a.annotations?.runbook_url).toBe(`${RUNBOOK_URL}${a.alert.toLowerCase()}`);
    expect(sections).toContain(a.alert.toLowerCase());
  }
});

it('has a runbook section for each alert and no other, each stating the threshold its rule uses, as docs/observability.md does', () => {
  const sections = runbookSections();
  expect([...sections.keys()]).toEqual(alerts.map((a) => a.alert));
  const observeSection = observeIt();
  for (const name of ['runbook.md', 'charts/kube-identity/rules/kube-identity.rules.yaml', 'deploy/monitoring/']) expect(observeSection).toContain(name);
  for (const a of alerts) {
    const threshold = THRESHOLDS[a.alert];
    expect([a.alert, threshold !== undefined]).toEqual([a.alert, true]);
    if (!threshold) continue;
    expect([a.alert, [a.expr.trim(), `for ${a.for ?? ''}`].some((s) => threshold.rule.test(s))]).toEqual([a.alert, true]);
    expect(`${a.annotations?.summary} ${a.annotations?.description}`).toContain(threshold.says);
    expect([a.alert, sections.get(a.alert)?.includes(threshold.says)]).toEqual([a.alert, true]);
    expect([a.alert, observeSection.replace(/\s+/g, ' ').includes(threshold.says)]).toEqual([a.alert, true]);
  }
});

it('has a promtool case where each alert fires and one where it stays quiet', () => {
  const cases = (parse(readFileSync(TESTS, 'utf8')) as { tests: RuleTest[] }).tests.flatMap((t) => t.alert_rule_test ?? []);
  for (const a of alerts) {
    const mine = cases.filter((c) => c.alertname === a.alert);
    expect([a.alert, mine.some((c) => c.exp_alerts.length > 0)]).toEqual([a.alert, true]);
    expect([a.alert, mine.some((c) => c.exp_alerts.length === 0)]).toEqual([a.alert, true]);
  }
});

describeWithTools(['promtool'])('promtool', () => {
  it('checks the rules', async () => {
    const { stdout } = await run('promtool', ['check', 'rules', RULES]);
    expect(stdout).toContain(`SUCCESS: ${alerts.length} rules found`);
  });

  it('passes the rule unit tests', async () => {
    const { stdout } = await run('promtool', ['test', 'rules', TESTS]);
    expect(stdout).toContain('SUCCESS');
  });

  it('fails a rule unit test whose expected alert does not fire (the tests can fail)', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'kube-identity-rules-'));
    try {
      const broken = readFileSync(TESTS, 'utf8').replace('../../charts/kube-identity/rules/kube-identity.rules.yaml', RULES).replace('values: 0+60x30', 'values: 0x30');
      await fs.writeFile(path.join(dir, 'broken.test.yaml'), broken);
      const failed = await run('promtool', ['test', 'rules', path.join(dir, 'broken.test.yaml')]).then(
        () => undefined,
        (err: { code: number; stdout: string; stderr: string }) => err,
      );
      expect(failed?.code).toBe(1);
      expect(`${failed?.stdout}${failed?.stderr}`).toMatch(/FAILED:[\s\S]*alertname: KubeIdentityCSRPendingTooLong/);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
