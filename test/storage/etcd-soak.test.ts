/**
 * The short fault soak (bench/soak.ts): two replica processes on three etcd members, writers and
 * watchers through both, a nemesis every 1-1.5 s until it injected every kind of fault (leader or
 * follower killed, a member stopped, all members down for 5 s, a compaction, a replica cut off from
 * etcd). Nothing acknowledged is lost, no refused write appears, watches neither skip nor repeat,
 * resourceVersions never go back, the hot object's history is linearizable, and no replica exits.
 * The 10-minute run is `bench soak`.
 */
import { runSoak } from '../../bench/soak.js';
import { FAULTS } from '../../bench/lib/nemesis.js';
import { describeWithTools } from '../helpers/tools.js';

describeWithTools(['etcd'])('fault soak, short', () => {
  it('keeps every promise under a fault every 1-1.5 s, every kind of fault once', async () => {
    // A round of faults takes 12-20 s (the outage 5 s of it); 45 s is a bound for a loaded host.
    const r = await runSoak({ durationS: 45, everyFault: true, faultGapMs: 1000, seed: Date.now() % 100_000, createWritersPerReplica: 1 });
    expect(r.replicaExits).toEqual([]);
    expect(r.violations).toEqual([]);
    expect(r.swaps.linearizable).toBe(true);
    // The run did what it is for: every fault was injected and writes went through and were checked.
    expect(FAULTS.filter((f) => r.faults[f] === 0)).toEqual([]);
    expect(r.creates.acknowledged).toBeGreaterThan(20);
    expect(r.swaps.acknowledged).toBeGreaterThan(5);
    expect(r.watch.events).toBeGreaterThan(20);
  }, 150_000);
});
