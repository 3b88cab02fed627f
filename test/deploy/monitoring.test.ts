/** `kubectl kustomize deploy/monitoring/` ships the chart's dashboard, byte for byte, labelled for the Grafana sidecar. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHART_DIR, DEPLOY_DIR, findDoc, parseDocs, type Obj } from './manifests.js';

it('builds one dashboard ConfigMap with the chart dashboard', () => {
  const docs = parseDocs(execFileSync('kubectl', ['kustomize', join(DEPLOY_DIR, 'monitoring')], { encoding: 'utf8' }), 'kubectl kustomize deploy/monitoring/');
  expect(docs).toHaveLength(1);
  const cm = findDoc(docs, 'ConfigMap', 'kube-identity-dashboard');
  expect(cm.metadata).toMatchObject({ namespace: 'kube-identity', labels: { grafana_dashboard: '1' } });
  expect((cm.data as Obj)['kube-identity.json']).toBe(readFileSync(join(CHART_DIR, 'dashboards', 'kube-identity.json'), 'utf8'));
});
