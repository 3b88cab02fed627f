/** A policy kube-apiserver would refuse stops the server before it starts: upstream's message, exit code 2, nothing written. */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli.js';

it('refuses to start on an invalid policy, saying what is wrong and where', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'audit-cli-'));
  try {
    const policy = path.join(dir, 'policy.yaml');
    writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Everything\n    nonResourceURLs: [healthz]\n');
    const log = path.join(dir, 'audit.log');
    const r = await runCli(['apiserver', '--data-dir', path.join(dir, 'data'), '--port', '0', '--audit-policy-file', policy, '--audit-log-path', log]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `auditPolicyFile: [rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse", rules[0].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules must begin with a '/' character]: from file ${policy}`,
    );
    expect([existsSync(path.join(dir, 'data')), existsSync(log)]).toEqual([false, false]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

it('refuses truncation whose batch limit is below its event limit, in upstream\'s words', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'audit-cli-'));
  try {
    const policy = path.join(dir, 'policy.yaml');
    writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n');
    const log = path.join(dir, 'audit.log');
    const r = await runCli([
      'apiserver', '--data-dir', path.join(dir, 'data'), '--port', '0', '--audit-policy-file', policy, '--audit-log-path', log,
      '--audit-log-truncate-enabled', '--audit-log-truncate-max-event-size', '2048', '--audit-log-truncate-max-batch-size', '1024',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('invalid audit truncate log max batch size 1024, must be greater than max event size (2048)');
    expect(existsSync(path.join(dir, 'data'))).toBe(false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
