/**
 * kube-apiserver's identity Lease (APIServerIdentity) and the liveness its lease endpoint reconciler
 * keeps. Each replica holds a Lease `apiserver-<hash>` in kube-system, labelled
 * `apiserver.kubernetes.io/identity=kube-apiserver` and `kubernetes.io/hostname`, renewed every 10 s
 * for 3600 s, with where it serves in `kubernetes.io/peer-advertise-address` (as upstream writes it
 * for its peer proxy). Expired identity Leases are deleted, at start and hourly (upstream's
 * apiserverleasegc). A replica whose Lease was renewed within upstream's endpoint-reconciler TTL
 * (15 s) is live: the kubernetes Service keeps pointing at any live replica's port
 * (kubernetes-service.ts), so replicas on different ports no longer take it from each other.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { KObject } from '../../api/meta.js';
import { isConflict, isNotFound } from '../../lib/api-errors.js';
import { record } from '../../lib/json.js';
import { formatMicroTime } from '../../lib/rfc3339.js';
import type { Logger } from '../../log/logger.js';
import type { GenericRegistry } from '../registry/generic/registry.js';
import type { RequestContext } from '../registry/generic/strategy.js';

export const IDENTITY_LABEL = 'apiserver.kubernetes.io/identity';
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';
export const PEER_ADDRESS_ANNOTATION = 'kubernetes.io/peer-advertise-address';
const COMPONENT = 'kube-apiserver';
const NAMESPACE = 'kube-system';
const LEASE_DURATION_SECONDS = 3600;

/** Upstream's periods; tests shorten them. */
export interface ControlPlaneTiming {
  /** How often the identity Lease is renewed and the kubernetes Service checked (10 s). */
  intervalMs: number;
  /** How long after its last renewal a replica counts as live (DefaultEndpointReconcilerTTL, 15 s). */
  liveTtlMs: number;
  /** How often expired identity Leases are deleted (IdentityLeaseGCPeriod, 1 h). */
  gcIntervalMs: number;
}

export const CONTROL_PLANE_TIMING: ControlPlaneTiming = { intervalMs: 10_000, liveTtlMs: 15_000, gcIntervalMs: 3_600_000 };

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** RFC 4648 base32, lower case, no padding (what upstream's lease names use). */
function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return bits > 0 ? out + BASE32[(value << (5 - bits)) & 31] : out;
}

/** A field as Go's cryptobyte writes a uint16-length-prefixed one. */
const prefixed = (text: string): Buffer => {
  const bytes = Buffer.from(text);
  const length = Buffer.alloc(2);
  length.writeUInt16BE(bytes.length);
  return Buffer.concat([length, bytes]);
};

/**
 * The Lease name: upstream hashes the hostname and the component; replicas here may share a host
 * on different ports, so the serving address is hashed after them.
 */
export function apiserverIdentity(hostname: string, address: string): string {
  const hash = createHash('sha256').update(Buffer.concat([prefixed(hostname), prefixed(COMPONENT), prefixed(address)])).digest();
  return `apiserver-${base32(hash.subarray(0, 16))}`;
}

/** `host:port`, the host in brackets when it is IPv6 (Go's net.JoinHostPort). */
export const joinHostPort = (host: string, port: number): string => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

const portOf = (address: unknown): number | undefined => {
  const port = typeof address === 'string' ? Number(address.slice(address.lastIndexOf(':') + 1)) : NaN;
  return Number.isInteger(port) && port > 0 ? port : undefined;
};

const isIdentityLease = (lease: KObject): boolean => lease.metadata?.labels?.[IDENTITY_LABEL] === COMPONENT;

/** When the Lease was last renewed (ms since the epoch), NaN when it never was. */
const renewedAt = (lease: KObject): number => {
  const renewTime = record(lease.spec).renewTime;
  return typeof renewTime === 'string' ? Date.parse(renewTime) : NaN;
};

/** Upstream's rule: a Lease without renewTime or leaseDurationSeconds is expired too. */
const isExpired = (lease: KObject, now: number): boolean => {
  const duration = record(lease.spec).leaseDurationSeconds;
  const renewed = renewedAt(lease);
  return typeof duration !== 'number' || Number.isNaN(renewed) || renewed + duration * 1000 < now;
};

export interface ApiserverIdentityOptions {
  leases: GenericRegistry;
  context: () => RequestContext;
  logger: Logger;
  hostname: string;
  /** Where this replica serves, `host:port`. */
  address: string;
  timing: ControlPlaneTiming;
}

export class ApiserverIdentity {
  readonly name: string;
  private readonly holder: string;
  private timers: NodeJS.Timeout[] = [];

  constructor(private readonly opts: ApiserverIdentityOptions) {
    this.name = apiserverIdentity(opts.hostname, opts.address);
    this.holder = `${this.name}_${randomUUID()}`;
  }

  /** Writes the Lease once (a failure is logged: the next renewal tries again), then keeps it and collects expired ones. */
  async start(): Promise<void> {
    await this.renew().catch((err: unknown) => this.opts.logger.warn({ err, lease: this.name }, 'cannot renew the API server identity Lease'));
    const every = (ms: number, run: () => Promise<void>, failure: string): void => {
      const timer = setInterval(() => void run().catch((err: unknown) => this.opts.logger.warn({ err }, failure)), ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(this.opts.timing.intervalMs, () => this.renew(), 'cannot renew the API server identity Lease');
    every(this.opts.timing.gcIntervalMs, () => this.collect(), 'cannot delete expired API server identity Leases');
    void this.collect().catch((err: unknown) => this.opts.logger.warn({ err }, 'cannot delete expired API server identity Leases'));
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
  }

  /** The ports of the replicas whose identity Lease is live, this one's among them once it renewed. */
  async livePorts(): Promise<Set<number>> {
    const now = Date.now();
    const ports = new Set<number>();
    for (const lease of await this.identityLeases()) {
      const port = portOf(lease.metadata?.annotations?.[PEER_ADDRESS_ANNOTATION]);
      if (port !== undefined && now - renewedAt(lease) <= this.opts.timing.liveTtlMs) ports.add(port);
    }
    return ports;
  }

  private async identityLeases(): Promise<KObject[]> {
    const { leases } = this.opts;
    const listed = await leases.store.range({ prefix: leases.prefix(NAMESPACE) });
    return listed.items.map((item) => item.object).filter(isIdentityLease);
  }

  private async renew(): Promise<void> {
    const { hostname, address } = this.opts;
    const renewTime = formatMicroTime({ seconds: Math.floor(Date.now() / 1000), nanos: (Date.now() % 1000) * 1e6 });
    const spec = { holderIdentity: this.holder, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime };
    const stamp = (lease: KObject): KObject => ({
      ...lease,
      metadata: {
        ...lease.metadata,
        labels: { ...lease.metadata?.labels, [IDENTITY_LABEL]: COMPONENT, [HOSTNAME_LABEL]: hostname },
        annotations: { ...lease.metadata?.annotations, [PEER_ADDRESS_ANNOTATION]: address },
      },
      spec: { ...record(lease.spec), ...spec },
    });
    const fresh: KObject = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.name, namespace: NAMESPACE } };
    await this.opts.leases.update(NAMESPACE, this.name, this.opts.context(), { dryRun: false, fieldManager: COMPONENT }, {
      createIfMissing: () => stamp(fresh),
      tryUpdate: stamp,
    });
  }

  /** Deletes the identity Leases past their duration; one renewed meanwhile fails the precondition and stays. */
  private async collect(): Promise<void> {
    const now = Date.now();
    for (const lease of await this.identityLeases()) {
      const name = lease.metadata?.name;
      if (name === undefined || name === this.name || !isExpired(lease, now)) continue;
      await this.opts.leases
        .delete(NAMESPACE, name, this.opts.context(), { dryRun: false, preconditions: { resourceVersion: lease.metadata?.resourceVersion } })
        .catch((err: unknown) => {
          if (!isNotFound(err) && !isConflict(err)) throw err;
        });
    }
  }
}
