/**
 * The bench's etcd with `pprof`: a member gives its Go CPU profile, which `go tool pprof` reads (a
 * gzipped protobuf); a member started as the tests start it serves no profiles.
 */
import { gunzipSync } from 'node:zlib';
import { startEtcd, type EtcdCluster } from '../../bench/lib/etcd-cluster.js';
import { describeWithTools } from '../helpers/tools.js';

describeWithTools(['etcd'])('bench/lib/etcd-cluster', () => {
  let clusters: EtcdCluster[] = [];
  afterEach(async () => {
    await Promise.all(clusters.map((c) => c.stop()));
    clusters = [];
  });

  it("gives a member's CPU profile with pprof, and none without", async () => {
    const profiled = await startEtcd({ pprof: true });
    const plain = await startEtcd();
    clusters.push(profiled, plain);
    const profile = gunzipSync(await profiled.members[0]!.cpuProfile(1));
    // A profile.proto message: its string table names the sample types, CPU samples in nanoseconds.
    const strings = profile.toString('latin1');
    expect(strings).toContain('samples');
    expect(strings).toContain('nanoseconds');
    await expect(plain.members[0]!.cpuProfile(1)).rejects.toThrow(/HTTP 404/);
  }, 60_000);
});
