/**
 * The fault soak's nemesis, after Jepsen's etcd tests: every 2-3 s it heals the last fault and
 * injects the next of six (each round every one of them, in a random order): kill -9 of the leader
 * or of a follower (started again at the next heal), SIGSTOP of a member (SIGCONT at the next heal),
 * all members killed for 5 s, a compaction at the current revision, and a partition between one
 * replica and every member (its TCP proxies cut).
 */
import { Etcd3 } from 'etcd3';
import type { EtcdCluster, EtcdMember } from './etcd-cluster.js';
import type { TcpProxy } from './tcp-proxy.js';

export const FAULTS = ['kill-leader', 'kill-follower', 'pause-member', 'outage', 'compact', 'partition'] as const;
export type Fault = (typeof FAULTS)[number];

const OUTAGE_MS = 5000;

export class Nemesis {
  readonly counts = Object.fromEntries(FAULTS.map((f) => [f, 0])) as Record<Fault, number>;
  /** Faults that could not be injected (no leader to kill during an election, a compaction etcd refused). */
  skipped = 0;
  readonly log: string[] = [];
  private heal: (() => Promise<void>) | undefined;
  private readonly client: Etcd3;
  /** Faults still to inject in this round: each round is every fault once, shuffled, so a short run sees them all. */
  private deck: Fault[] = [];

  constructor(
    private readonly etcd: EtcdCluster,
    /** Each replica's proxies, one per member. */
    private readonly proxies: TcpProxy[][],
    private readonly rand: () => number,
  ) {
    this.client = new Etcd3({ hosts: etcd.endpoints });
  }

  /** Heals the last fault, then injects a random one. */
  async step(): Promise<void> {
    await this.healAll();
    if (this.deck.length === 0) this.deck = this.shuffled(FAULTS);
    const fault = this.deck.pop()!;
    const done = await this.inject(fault).catch((err: unknown) => {
      this.log.push(`${fault} skipped: ${err instanceof Error ? err.message : String(err)}`);
      return false;
    });
    if (done) this.counts[fault]++;
    else this.skipped++;
  }

  async healAll(): Promise<void> {
    const heal = this.heal;
    this.heal = undefined;
    await heal?.();
    // A member a fault left down (killed while it was the target of the last one) comes back too.
    await Promise.all(this.etcd.members.filter((m) => !m.running).map((m) => m.start()));
  }

  close(): void {
    this.client.close();
  }

  private shuffled<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.rand() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  private pick<T>(items: T[]): T {
    return items[Math.floor(this.rand() * items.length)]!;
  }

  private async inject(fault: Fault): Promise<boolean> {
    const members = this.etcd.members;
    switch (fault) {
      case 'kill-leader':
      case 'kill-follower': {
        const leader = await this.leader();
        const target = fault === 'kill-leader' ? leader : this.pick(members.filter((m) => m !== leader));
        if (!target) return false;
        await target.kill();
        this.heal = () => target.start();
        this.log.push(`${fault} ${target.name}`);
        return true;
      }
      case 'pause-member': {
        const target = this.pick(members);
        target.pause(true);
        this.heal = async () => target.pause(false);
        this.log.push(`${fault} ${target.name}`);
        return true;
      }
      case 'outage':
        await Promise.all(members.map((m) => m.kill()));
        this.log.push('outage');
        await new Promise((r) => setTimeout(r, OUTAGE_MS));
        await Promise.all(members.map((m) => m.start()));
        return true;
      case 'compact': {
        const res = await this.client.kv.range({ key: Buffer.from('compact_rev_key') }, { deadline: Date.now() + 2000 });
        await this.client.kv.compact({ revision: res.header.revision }, { deadline: Date.now() + 2000 });
        this.log.push(`compact ${res.header.revision}`);
        return true;
      }
      case 'partition': {
        const replica = Math.floor(this.rand() * this.proxies.length);
        for (const p of this.proxies[replica]!) p.partition(true);
        this.heal = async () => {
          for (const p of this.proxies[replica]!) p.partition(false);
        };
        this.log.push(`partition replica ${replica}`);
        return true;
      }
    }
  }

  /** The leader, if one is elected within 5 s. */
  private async leader(): Promise<EtcdMember | undefined> {
    return Promise.race([this.etcd.leader().catch(() => undefined), new Promise<undefined>((r) => setTimeout(() => r(undefined), 5000).unref())]);
  }
}
