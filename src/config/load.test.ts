import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadApiserverConfig, loadControllerConfig, loadUpConfig } from './load.js';
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
    expect(problems).toContain(`config file ${file}: logLevel: must be one of`);
    expect(problems).toMatch(/^env KUBE_IDENTITY_LEADER_ELECT: must be true or false/m);
    expect(problems).toMatch(/^env KUBE_IDENTITY_RESYNC_PERIOD: must be a duration/m);
    expect(problems).toMatch(/^flag --approver-workers: must be at least 1, got 0$/m);
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

describe('loadApiserverConfig and loadUpConfig', () => {
  it('uses the documented defaults', async () => {
    const c = await loadUpConfig();
    expect(c).toMatchObject({ dataDir: '.kube-identity', host: '127.0.0.1', port: 6443, storage: 'sqlite', logLevel: 'info' });
    expect(c.metricsBindAddress).toBe('127.0.0.1:8080');
  });

  it('takes flags over env over file', async () => {
    const file = await yamlFile('port: 7000\nstorage: memory\nhost: 0.0.0.0\n');
    const c = await loadApiserverConfig({ file, env: { KUBE_IDENTITY_PORT: '7001', KUBE_IDENTITY_HOST: '::' }, flags: { port: '7002' } });
    expect([c.port, c.host, c.storage]).toEqual([7002, '::', 'memory']);
  });

  it('reports every bad value at once, each with the expected form', async () => {
    const err = await loadUpConfig({
      flags: { storage: 'mongo', logLevel: 'loud', port: 'abc', metricsBindAddress: '8080', bookmarkIntervalMs: '0' },
      env: { KUBE_IDENTITY_HOST: 'ignored-because-valid' },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      'flag --port: must be an integer, got "abc"',
      'flag --storage: must be one of sqlite, memory, etcd, got "mongo"',
      'flag --log-level: must be one of debug, info, warn, error, got "loud"',
      'flag --bookmark-interval-ms: must be at least 1, got 0',
      'metricsBindAddress: must be HOST:PORT such as 127.0.0.1:8080 or :8080, got "8080"',
    ]);
  });

  it('takes the etcd options with kube-apiserver defaults, and refuses ones that do not fit together', async () => {
    const c = await loadApiserverConfig({ flags: { storage: 'etcd', etcdServers: 'http://127.0.0.1:2379,https://10.0.0.2:2379' } });
    expect([c.etcdPrefix, c.etcdCompactionInterval, c.eventTtl, c.etcdCountMetricPollPeriod, c.etcdDbMetricPollInterval]).toEqual(['/registry', 300_000, 3_600_000, 60_000, 30_000]);
    const off = await loadApiserverConfig({ flags: { etcdCountMetricPollPeriod: '0', etcdDbMetricPollInterval: '0' } });
    expect([off.etcdCountMetricPollPeriod, off.etcdDbMetricPollInterval]).toEqual([0, 0]);
    const err = await loadUpConfig({ flags: { storage: 'etcd', etcdPrefix: 'registry/', etcdCertfile: 'c.pem' } }).catch((e: unknown) => e);
    expect((err as ConfigError).problems).toEqual([
      'etcdServers: required with --storage etcd',
      'etcdCertfile and etcdKeyfile must be given together',
      'etcdPrefix: must start and not end with "/", got "registry/"',
    ]);
    const bad = await loadApiserverConfig({ flags: { storage: 'etcd', etcdServers: '127.0.0.1:2379' } }).catch((e: unknown) => e);
    expect((bad as ConfigError).problems).toEqual(['etcdServers: each must be http(s)://HOST:PORT, got "127.0.0.1:2379"']);
  });

  it('takes HTTP/2 serving flags with kube-apiserver defaults and ranges', async () => {
    const d = await loadApiserverConfig();
    expect([d.disableHttp2Serving, d.http2MaxStreamsPerConnection, d.goawayChance]).toEqual([false, 0, 0]);
    const c = await loadUpConfig({ flags: { disableHttp2Serving: 'true', http2MaxStreamsPerConnection: '1000', goawayChance: '0.001' } });
    expect([c.disableHttp2Serving, c.http2MaxStreamsPerConnection, c.goawayChance]).toEqual([true, 1000, 0.001]);
    const err = await loadApiserverConfig({ flags: { http2MaxStreamsPerConnection: '-1', goawayChance: '0.05' } }).catch((e: unknown) => e);
    expect((err as ConfigError).problems).toEqual(['flag --http2-max-streams-per-connection: must be at least 0, got -1', 'flag --goaway-chance: must be at most 0.02, got 0.05']);
  });

  it('takes an IPv4 Service range of a /12 to a /29, as the allocator serves, and names what is wrong with another', async () => {
    expect((await loadApiserverConfig({ flags: { serviceClusterIpRange: '10.100.0.0/16' } })).serviceClusterIpRange).toBe('10.100.0.0/16');
    for (const [range, problem] of [
      ['10.0.0.0/8', 'serviceClusterIpRange: 10.0.0.0/8 is too large; for 32-bit addresses, the mask must be >= 12'],
      ['10.0.0.0/30', 'serviceClusterIpRange: 10.0.0.0/30 is too small; the mask must be <= 29'],
      ['fd00::/112', 'serviceClusterIpRange: must be an IPv4 CIDR such as 10.96.0.0/12, got "fd00::/112"'],
    ]) {
      const err = await loadUpConfig({ flags: { serviceClusterIpRange: range } }).catch((e: unknown) => e);
      expect((err as ConfigError).problems).toContain(problem);
    }
  });

  it('says a token file cannot be read along with the other problems', async () => {
    const err = await loadUpConfig({ flags: { tokenAuthFile: '/no/such/tokens.csv', port: '-1' } }).catch((e: unknown) => e);
    expect((err as ConfigError).problems).toEqual([
      'flag --port: must be at least 0, got -1',
      "tokenAuthFile: cannot read /no/such/tokens.csv: ENOENT: no such file or directory, access '/no/such/tokens.csv'",
    ]);
  });

  it('refuses ports outside 0-65535 and unknown file keys', async () => {
    const file = await yamlFile('prot: 1\n');
    const err = await loadApiserverConfig({ file, flags: { port: '70000' } }).catch((e: unknown) => e);
    expect((err as ConfigError).problems).toEqual([`config file ${file}: unknown field "prot"`, 'flag --port: must be at most 65535, got 70000']);
  });
});
