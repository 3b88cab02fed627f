/**
 * `make chart-render` and `make chart-lint` as a user runs them without helm: the chart rendered
 * with values.yaml, with VALUES/SET overrides, and a value the schema refuses stopping it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { describeWithTools } from '../helpers/tools.js';
import { RENDERER_TOOLS } from '../../hack/chart-render.mjs';

const run = promisify(execFile);
const make = (...args: string[]) => run('make', ['-s', '--no-print-directory', ...args], { env: { ...process.env, NODE_OPTIONS: '' }, maxBuffer: 16 << 20 });

type Doc = { kind: string; metadata: { name: string; namespace?: string }; spec?: { replicas?: number } };
const docsOf = (yaml: string): Doc[] => parseAllDocuments(yaml).map((d) => d.toJS() as Doc).filter((d) => d !== null);

describeWithTools(RENDERER_TOOLS)('make chart-render', () => {
  it('prints the manifests helm template would, each after its # Source line', async () => {
    const { stdout } = await make('chart-render');
    const docs = docsOf(stdout);
    expect(docs.map((d) => d.kind)).toEqual(expect.arrayContaining(['Deployment', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'Service']));
    expect(stdout.match(/^# Source: kube-identity\/templates\/\S+\.yaml$/gm)?.length).toBeGreaterThanOrEqual(docs.length / 2);
    const deployment = docs.find((d) => d.kind === 'Deployment');
    expect(deployment?.metadata).toMatchObject({ name: 'kube-identity', namespace: 'kube-identity' });
  }, 120_000);

  it('merges VALUES files and SET values, and stops on a value values.schema.json refuses', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-values-'));
    try {
      const file = path.join(dir, 'values.yaml');
      writeFileSync(file, 'replicaCount: 3\n');
      const docs = docsOf((await make('chart-render', `VALUES=${file}`, 'SET=metrics.serviceMonitor.enabled=false')).stdout);
      expect(docs.find((d) => d.kind === 'Deployment')?.spec?.replicas).toBe(3);
      const refused = await make('chart-render', 'SET=logLevel=trace').catch((e: unknown) => e as { code: number; stderr: string });
      expect(refused).toMatchObject({ code: 2 });
      expect((refused as { stderr: string }).stderr).toMatch(/chart-render: values don't meet the specifications of the schema: .*"instancePath":"\/logLevel"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('is what make chart-lint runs when helm is not installed', async () => {
    const { stdout } = await make('chart-lint');
    expect(stdout).toMatch(/chart-lint: ok\n$/);
  }, 120_000);
});
