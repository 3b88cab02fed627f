/**
 * The alert rules (charts/kube-identity/rules/kube-identity.rules.yaml, the PrometheusRule's spec) pass
 * `promtool check rules`; the `promtool test rules` cases in kube-identity.rules.test.yaml show every
 * alert firing on an unhealthy series and quiet on a healthy one; every alert carries a summary, a
 * description and a runbook_url naming a section of docs/runbook.md.
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
  annotations?: Record<string, string>;
}
interface RuleTest {
  alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[];
}

const alerts = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);

it('defines the alerts an on-call engineer acts on, each with a summary, a description and its runbook section', () => {
  expect(alerts.map((a) => a.alert)).toEqual([
    'KubeIdentityCSRPendingTooLong',
    'KubeIdentitySignerCAExpiringSoon',
    'KubeIdentitySignerCAExpiryCritical',
    'KubeIdentityReconcileErrorsHigh',
    'KubeIdentityNoLeader',
    'KubeIdentityInformerStale',
    'KubeIdentityCertificatesFailing',
  ]);
  const sections = readFileSync('docs/runbook.md', 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('## '))
    .map((l) => l.slice(3).toLowerCase());
  for (const a of alerts) {
    expect(Object.keys(a.annotations ?? {}).sort()).toEqual(['description', 'runbook_url', 'summary']);
    expect(a.annotations?.runbook_url).toBe(`${RUNBOOK_URL}${a.alert.toLowerCase()}`);
    expect(sections).toContain(a.alert.toLowerCase());
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
