/**
 * `kubectl kustomize deploy/monitoring/` ships the chart's dashboard, byte for byte, labelled for the Grafana
 * sidecar, and the chart's alert rules as a PrometheusRule that hack/gen-prometheusrule.sh generated from the
 * one rule file (charts/kube-identity/rules/kube-identity.rules.yaml): an edit of either that is not carried
 * over fails here.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CHART_DIR, DEPLOY_DIR, REPO, findDoc, parseDocs, type Obj } from './manifests.js';

const MONITORING_DIR = join(DEPLOY_DIR, 'monitoring');
const docs = parseDocs(execFileSync('kubectl', ['kustomize', MONITORING_DIR], { encoding: 'utf8' }), 'kubectl kustomize deploy/monitoring/');

it('builds the dashboard ConfigMap and the PrometheusRule, in the kube-identity namespace', () => {
  expect(docs.map((d) => `${String(d.kind)}/${String((d.metadata as Obj).name)}`).sort()).toEqual(['ConfigMap/kube-identity-dashboard', 'PrometheusRule/kube-identity']);
  for (const d of docs) expect(d.metadata).toMatchObject({ namespace: 'kube-identity', labels: { 'app.kubernetes.io/name': 'kube-identity' } });
});

it('ships the chart dashboard, labelled for the Grafana sidecar', () => {
  const cm = findDoc(docs, 'ConfigMap', 'kube-identity-dashboard');
  expect(cm.metadata).toMatchObject({ labels: { grafana_dashboard: '1' } });
  expect((cm.data as Obj)['kube-identity.json']).toBe(readFileSync(join(CHART_DIR, 'dashboards', 'kube-identity.json'), 'utf8'));
});

it('ships the chart rule file as the PrometheusRule spec', () => {
  const rule = findDoc(docs, 'PrometheusRule', 'kube-identity');
  expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
  expect(rule.spec).toEqual(parse(readFileSync(join(CHART_DIR, 'rules', 'kube-identity.rules.yaml'), 'utf8')));
});

it('prometheusrule.yaml is what hack/gen-prometheusrule.sh writes (re-run it after editing the rules)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kid-prometheusrule-'));
  try {
    execFileSync(join(REPO, 'hack', 'gen-prometheusrule.sh'), [join(dir, 'prometheusrule.yaml')]);
    expect(readFileSync(join(MONITORING_DIR, 'prometheusrule.yaml'), 'utf8')).toBe(readFileSync(join(dir, 'prometheusrule.yaml'), 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
