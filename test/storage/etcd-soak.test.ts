/**
 * The short fault soak (bench/soak.ts): two replica processes on three etcd members, writers and
 * watchers through both, a nemesis every 2-3 s (leader or follower killed, a member stopped, all
 * members down for 5 s, a compaction, a replica cut off from etcd). Nothing acknowledged is lost, no
 * refused write appears, watches neither skip nor repeat, resourceVersions never go back, the hot
 * object's history is linearizable, and no replica exits. The 10-minute run is `bench soak`.
 */
import { runSoak } from '../../bench/soak.js';
import { describeWithTools } from '../helpers/tools.js';

describeWithTools(['etcd'])('fault soak, short', () => {
  it('keeps every promise under a fault every 2-3 s', async () => {
    // 20 s of faults (five to seven of them) after the replicas started from source: 35-60 s in all.
    const r = await runSoak({ durationS: 20, seed: Date.now() % 100_000, createWritersPerReplica: 1 });
    expect(r.replicaExits).toEqual([]);
    expect(r.violations).toEqual([]);
    expect(r.swaps.linearizable).toBe(true);
    // The run did what it is for: faults were injected and writes went through and were checked.
    expect(Object.values(r.faults).reduce((a, b) => a + b, 0) - r.faults.skipped).toBeGreaterThanOrEqual(4);
    expect(r.creates.acknowledged).toBeGreaterThan(20);
    expect(r.swaps.acknowledged).toBeGreaterThan(5);
    expect(r.watch.events).toBeGreaterThan(20);
  }, 150_000);
});
