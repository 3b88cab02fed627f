/**
 * kube-apiserver's own Service: `kubernetes` in `default`, pointing at the API server's port. As
 * upstream's control-plane controller does, it is made when missing and put back when someone
 * deletes or changes it (checkServiceFormat: every field of every port, and the type), checked at
 * start and every 10 s. Replicas on one host serve on different ports, and the Service holds one:
 * its targetPort is left alone while it is a live replica's port (apiserver-identity.ts), else it
 * becomes this one's, so replicas no longer rewrite it in turn.
 */
import type { KObject } from '../../api/meta.js';
import type { Logger } from '../../log/logger.js';
import { isConflict, isInvalid } from '../../lib/api-errors.js';
import { deepEqual } from '../../lib/json-value.js';
import { record } from '../../lib/json.js';
import { DEFAULT_SERVICE_RANGE, type ServiceRange } from '../../lib/service-range.js';
import { kubernetesService } from '../registry/core/service.js';
import type { GenericRegistry } from '../registry/generic/registry.js';
import type { RequestContext } from '../registry/generic/strategy.js';

const FIELD_MANAGER = 'kube-apiserver';

export interface KubernetesServiceOptions {
  services: GenericRegistry;
  context: () => RequestContext;
  logger: Logger;
  port: number;
  /** The ports of the live replicas, this one's among them (apiserver-identity.ts); absent: only this one's. */
  livePorts?: () => Promise<Set<number>>;
  /** How often the Service is checked (10 s). */
  intervalMs: number;
  /** Default 10.96.0.0/12. */
  serviceRange?: ServiceRange;
}

/** The targetPort of the Service's (first) port. */
function targetPortOf(service: KObject): unknown {
  const ports = record(service.spec).ports;
  return Array.isArray(ports) ? record(ports[0]).targetPort : undefined;
}

export class KubernetesServiceController {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: KubernetesServiceOptions) {}

  /** Makes the Service right once, then keeps it so. */
  async start(): Promise<void> {
    // API server replicas starting together on one store may all find it missing: the create that
    // lost the race (409 on the name, or 422 on its cluster IP) finds it there on the second look.
    await this.reconcile().catch((err: unknown) => {
      if (isConflict(err) || isInvalid(err)) return this.reconcile();
      throw err;
    });
    this.timer = setInterval(() => {
      this.reconcile().catch((err: unknown) => this.opts.logger.warn({ err }, 'cannot reconcile the kubernetes Service'));
    }, this.opts.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async reconcile(): Promise<void> {
    const range = this.opts.serviceRange ?? DEFAULT_SERVICE_RANGE;
    const live = (await this.opts.livePorts?.()) ?? new Set([this.opts.port]);
    const ctx = this.opts.context();
    await this.opts.services.update('default', 'kubernetes', ctx, { dryRun: false, fieldManager: FIELD_MANAGER }, {
      createIfMissing: () => kubernetesService(this.opts.port, range),
      tryUpdate: (cur) => {
        const kept = targetPortOf(cur);
        const wantSpec = kubernetesService(typeof kept === 'number' && live.has(kept) ? kept : this.opts.port, range).spec ?? {};
        // The generic registry hands back KObjects: the stored spec is read as one.
        const spec = record(cur.spec);
        if (deepEqual(spec.ports, wantSpec.ports) && spec.clusterIP === wantSpec.clusterIP && spec.type === wantSpec.type) return cur;
        return { ...cur, spec: { ...spec, ...wantSpec, clusterIPs: [wantSpec.clusterIP] } };
      },
    });
  }
}
