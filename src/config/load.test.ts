import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadControllerConfig } from './load.js';
import { describeConfig } from './schema.js';

async function yamlFile(text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kid-config-'));
  const file = join(dir, 'config.yaml');
  await writeFile(file, text);
  return file;
}

describe('loadControllerConfig', () => {
  it('uses the documented defaults', async () => {
    const c = await loadControllerConfig();
    expect(c.leaderElectionLeaseDuration).toBe(15_000);
    expect(c.leaderElectionRenewDeadline).toBe(10_000);
    expect(c.leaderElectionRetryPeriod).toBe(2_000);
    expect(c.rateLimiterBaseDelay).toBe(200);
    expect(c.rateLimiterMaxDelay).toBe(1_000_000);
    expect(c.clusterSigningDuration).toBe(8760 * 3_600_000);
    expect(c.leaderElect).toBe(true);
  });

  it('takes flags over env over file', async () => {
    const file = await yamlFile('approverWorkers: 2\nsignerWorkers: 3\ncleanerWorkers: 4\n');
    const c = await loadControllerConfig({
      file,
      env: { KUBE_IDENTITY_SIGNER_WORKERS: '7', KUBE_IDENTITY_APPROVER_WORKERS: '8' },
      flags: { approverWorkers: '9' },
    });
    expect([c.approverWorkers, c.signerWorkers, c.cleanerWorkers]).toEqual([9, 7, 4]);
  });

  it('reports every problem at once', async () => {
    const file = await yamlFile('bogus: 1\nlogLevel: loud\n');
    const err = await loadControllerConfig({
      file,
      env: { KUBE_IDENTITY_LEADER_ELECT: 'maybe', KUBE_IDENTITY_RESYNC_PERIOD: '10 minutes' },
      flags: { approverWorkers: '0', leaderElectionRenewDeadline: '20s', clusterSigningCertFile: '/ca.crt' },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems.join('\n');
    expect(problems).toMatch(/unknown field "bogus"/);
    expect(problems).toMatch(/logLevel: must be one of/);
    expect(problems).toMatch(/KUBE_IDENTITY_LEADER_ELECT leaderElect: must be true or false/);
    expect(problems).toMatch(/resyncPeriod: must be a duration/);
    expect(problems).toMatch(/approverWorkers: must be at least 1/);
    expect(problems).toMatch(/clusterSigningCertFile and clusterSigningKeyFile must be set together/);
    // Renew deadline 20s is not below the default 15s lease duration.
    expect(problems).toMatch(/LeaseDuration must be greater than leaderElectionRenewDeadline/);
  });

  it('describes every option for --help', () => {
    const rows = describeConfig();
    const lease = rows.find((r) => r.key === 'leaderElectionLeaseDuration');
    expect(lease).toMatchObject({ flag: '--leader-election-lease-duration', env: 'KUBE_IDENTITY_LEADER_ELECTION_LEASE_DURATION', default: '15s' });
  });
});
