/**
 * kube-apiserver's own Service: `kubernetes` in `default`, pointing at the API server's port. As
 * upstream's control-plane controller does, it is made when missing and put back when someone
 * deletes or changes it, checked at start and every 10 s (the server's port may differ per start).
 */
import type { Logger } from '../../log/logger.js';
import { isConflict, isInvalid } from '../../lib/api-errors.js';
import { deepEqual } from '../../lib/json-value.js';
import { record } from '../../lib/json.js';
import { DEFAULT_SERVICE_RANGE, type ServiceRange } from '../../lib/service-range.js';
import { kubernetesService } from '../registry/core/service.js';
import type { GenericRegistry } from '../registry/generic/registry.js';
import type { RequestContext } from '../registry/generic/strategy.js';

const INTERVAL_MS = 10_000;
const FIELD_MANAGER = 'kube-apiserver';

export interface KubernetesServiceOptions {
  services: GenericRegistry;
  context: () => RequestContext;
  logger: Logger;
  port: number;
  /** Default 10.96.0.0/12. */
  serviceRange?: ServiceRange;
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
    }, INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async reconcile(): Promise<void> {
    const want = kubernetesService(this.opts.port, this.opts.serviceRange ?? DEFAULT_SERVICE_RANGE);
    const wantSpec = want.spec ?? {};
    const ctx = this.opts.context();
    await this.opts.services.update('default', 'kubernetes', ctx, { dryRun: false, fieldManager: FIELD_MANAGER }, {
      createIfMissing: () => want,
      tryUpdate: (cur) => {
        // The generic registry hands back KObjects: the stored spec is read as one.
        const spec = record(cur.spec);
        if (deepEqual(spec.ports, wantSpec.ports) && spec.clusterIP === wantSpec.clusterIP && spec.type === wantSpec.type) return cur;
        return { ...cur, spec: { ...spec, ...wantSpec, clusterIPs: [wantSpec.clusterIP] } };
      },
    });
  }
}
