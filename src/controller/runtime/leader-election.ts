/**
 * Leader election on a coordination.k8s.io/v1 Lease with client-go's semantics:
 * - try to acquire or renew every `retryPeriod`; a lease held by someone else counts as expired only
 *   when its record has not changed for `leaseDuration` by OUR clock (observed time, so clock skew
 *   between nodes does not matter);
 * - every write carries the resourceVersion read before it (optimistic concurrency: a 409 means
 *   another candidate won the race);
 * - a leader that cannot renew within `renewDeadline` stops leading;
 * - on shutdown the leader releases the lease (empty holderIdentity, 1 s duration) so a standby
 *   takes over at once instead of after the lease expires.
 */
import { randomBytes } from 'node:crypto';
import { CoordinationV1Api, V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import { sleep, type Clock } from '../../lib/clock.js';
import type { Logger } from '../../log/logger.js';
import { leaderGauge } from '../../metrics/leader.js';
import type { KubeClient } from '../client/kube-client.js';
import { httpStatusOf, isConflict, isNotFound, isRefused } from '../../lib/api-errors.js';
import { REFUSED_MESSAGE } from '../client/errors.js';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  /** Unique per process: defaults to `<hostname>_<random>`. */
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

export const LEADER_ELECTION_DEFAULTS = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

/** client-go's identity shape: the pod name (hostname) plus a random suffix so restarts never collide. */
export function defaultIdentity(hostname: string): string {
  return `${hostname}_${randomBytes(8).toString('hex')}`;
}

export interface LeaderElectorDeps {
  client: KubeClient;
  clock: Clock;
  logger: Logger;
  registry?: Registry;
}

export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private readonly logger: Logger;
  private observed: { key: string; at: number } | undefined;
  private current: V1Lease | undefined;
  private leading = false;

  constructor(
    private readonly opts: LeaderElectionOptions,
    private readonly deps: LeaderElectorDeps,
  ) {
    this.api = deps.client.api(CoordinationV1Api);
    this.logger = deps.logger.child({ lease: `${opts.namespace}/${opts.name}`, identity: opts.identity });
    this.gauge(0);
  }

  isLeader(): boolean {
    return this.leading;
  }

  /**
   * Campaigns until elected, runs `lead` with a signal that aborts when leadership is lost or `signal`
   * aborts, then releases the lease. Resolves `true` when it ended because `signal` aborted, `false`
   * when leadership was lost.
   */
  async run(signal: AbortSignal, lead: (leading: AbortSignal) => Promise<void>): Promise<boolean> {
    while (!signal.aborted && !(await this.tryAcquireOrRenew())) {
      await sleep(this.deps.clock, this.opts.retryPeriodMs, signal);
    }
    if (signal.aborted) return true;
    this.setLeading(true);
    this.logger.info('became leader');
    const leading = new AbortController();
    const onAbort = (): void => leading.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    const renewal = this.renewLoop(leading.signal).then(() => leading.abort());
    await lead(leading.signal);
    leading.abort();
    await renewal;
    signal.removeEventListener('abort', onAbort);
    const lost = !this.leading;
    if (this.leading) await this.release();
    this.setLeading(false);
    return !lost || signal.aborted;
  }

  /** Renews every retry period; returns when renewal failed for longer than the renew deadline, or on abort. */
  private async renewLoop(signal: AbortSignal): Promise<void> {
    let lastRenew = this.deps.clock.now();
    while (!signal.aborted) {
      await sleep(this.deps.clock, this.opts.retryPeriodMs, signal);
      if (signal.aborted) return;
      if (await this.tryAcquireOrRenew()) {
        lastRenew = this.deps.clock.now();
      } else if (this.deps.clock.now() - lastRenew >= this.opts.renewDeadlineMs || this.heldByOther()) {
        this.logger.info('leader election lost');
        this.setLeading(false);
        return;
      }
    }
  }

  private heldByOther(): boolean {
    const holder = this.current?.spec?.holderIdentity;
    return !!holder && holder !== this.opts.identity;
  }

  /** One attempt (client-go tryAcquireOrRenew). Errors count as "not acquired". */
  async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.opts;
    const now = new V1MicroTime(this.deps.clock.now());
    try {
      let lease: V1Lease;
      try {
        lease = await this.api.readNamespacedLease({ name, namespace });
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.current = await this.api.createNamespacedLease({ namespace, body: this.record(undefined, now) });
        return true;
      }
      this.current = lease;
      this.observe(lease);
      const holder = lease.spec?.holderIdentity;
      if (holder && holder !== identity && !this.expired(lease)) return false;
      this.current = await this.api.replaceNamespacedLease({ name, namespace, body: this.record(lease, now) });
      this.observe(this.current);
      return true;
    } catch (err) {
      if (isConflict(err)) this.logger.debug('lease changed meanwhile');
      else if (isRefused(err)) this.logger.error({ err, status: httpStatusOf(err) }, REFUSED_MESSAGE);
      else this.logger.info({ err }, 'failed to acquire or renew lease');
      return false;
    }
  }

  private record(old: V1Lease | undefined, now: V1MicroTime): V1Lease {
    const spec = old?.spec ?? {};
    const same = spec.holderIdentity === this.opts.identity;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.opts.name, namespace: this.opts.namespace, resourceVersion: old?.metadata?.resourceVersion },
      spec: {
        holderIdentity: this.opts.identity,
        leaseDurationSeconds: Math.ceil(this.opts.leaseDurationMs / 1000),
        acquireTime: same && spec.acquireTime ? spec.acquireTime : now,
        renewTime: now,
        leaseTransitions: (spec.leaseTransitions ?? 0) + (old && !same ? 1 : 0),
      },
    };
  }

  /** Remembers when (by our clock) the lease record last changed. */
  private observe(lease: V1Lease): void {
    const key = `${lease.spec?.holderIdentity ?? ''}|${lease.spec?.renewTime?.toISOString?.() ?? ''}|${lease.metadata?.resourceVersion ?? ''}`;
    if (this.observed?.key !== key) this.observed = { key, at: this.deps.clock.now() };
  }

  private expired(lease: V1Lease): boolean {
    const duration = (lease.spec?.leaseDurationSeconds ?? 0) * 1000;
    return (this.observed?.at ?? 0) + duration <= this.deps.clock.now();
  }

  private async release(): Promise<void> {
    const lease = this.current;
    if (!lease?.spec || lease.spec.holderIdentity !== this.opts.identity) return;
    const now = new V1MicroTime(this.deps.clock.now());
    try {
      await this.api.replaceNamespacedLease({
        name: this.opts.name,
        namespace: this.opts.namespace,
        body: {
          ...lease,
          spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now, acquireTime: now },
        },
      });
      this.logger.info('released lease');
    } catch (err) {
      this.logger.info({ err }, 'failed to release lease');
    }
  }

  private setLeading(v: boolean): void {
    this.leading = v;
    this.gauge(v ? 1 : 0);
  }

  private gauge(v: number): void {
    if (this.deps.registry) leaderGauge(this.deps.registry).set({ name: this.opts.name }, v);
  }
}
