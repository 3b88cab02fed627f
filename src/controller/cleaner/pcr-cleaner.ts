/**
 * podcertificaterequest-cleaner-controller: deletes every PodCertificateRequest older than a
 * threshold (upstream 15 minutes from creation, whatever its state), as kube-controller-manager
 * does. A request is a one-shot exchange between a kubelet and a signer: the kubelet reads the
 * chain as soon as it is issued and makes a new request for each refresh, so an old one is only
 * clutter (and, denied or pending, a slow leak a node could cause). Like the CSR cleaner it judges
 * the informer's copy on each pass and deletes with that copy's uid as precondition, so a request
 * re-created under the same name is left for the next pass. A request already gone is fine.
 */
import { PCR_RESOURCE, type PodCertificateRequestV1beta1 } from '../../api/pod-certificates.js';
import { CERTIFICATES_GROUP } from '../../api/certificates.js';
import { isConflict, isNotFound } from '../../lib/api-errors.js';
import { everyInterval, type Clock } from '../../lib/clock.js';
import type { Logger } from '../../log/logger.js';
import type { PcrCleanerMetrics, PcrCleanerResult } from '../../metrics/cleaner.js';
import type { KubeClient } from '../client/kube-client.js';
import type { ReadonlyCache } from '../informer/cache.js';
import type { Runnable } from '../runtime/manager.js';

export const PCR_CLEANER_NAME = 'podcertificaterequest-cleaner-controller';

export interface PcrCleanerOptions {
  client: Pick<KubeClient, 'write'>;
  /** The API version the informer reads (the path of the DELETE). */
  version: string;
  pcrs: Pick<ReadonlyCache<PodCertificateRequestV1beta1>, 'list'>;
  clock: Clock;
  logger: Logger;
  metrics: PcrCleanerMetrics;
  /** Age from creationTimestamp past which a request is deleted (upstream 15 min). */
  thresholdMs: number;
  /** Polling interval (upstream 5 min). */
  intervalMs: number;
}

/** Whether the request was created at least `thresholdMs` before `now`; an unparsable time never matches. */
export function pcrExpired(pcr: PodCertificateRequestV1beta1, now: number, thresholdMs: number): boolean {
  const created = Date.parse(pcr.metadata?.creationTimestamp ?? '');
  return Number.isFinite(created) && now >= created + thresholdMs;
}

export class PcrCleaner implements Runnable {
  readonly name = PCR_CLEANER_NAME;
  readonly needLeaderElection = true;
  private readonly logger: Logger;

  constructor(private readonly o: PcrCleanerOptions) {
    this.logger = o.logger.child({ controller: PCR_CLEANER_NAME });
  }

  async start(signal: AbortSignal): Promise<void> {
    await everyInterval(this.o.clock, this.o.intervalMs, signal, () => this.runOnce());
  }

  /** One pass; returns the `namespace/name` of the requests deleted. */
  async runOnce(): Promise<string[]> {
    const deleted: string[] = [];
    const now = this.o.clock.now();
    for (const pcr of this.o.pcrs.list()) {
      if (!pcrExpired(pcr, now, this.o.thresholdMs)) continue;
      const result = await this.delete(pcr);
      this.o.metrics.deletions.inc({ result });
      if (result === 'deleted') deleted.push(`${pcr.metadata?.namespace ?? ''}/${pcr.metadata?.name ?? ''}`);
    }
    return deleted;
  }

  private async delete(pcr: PodCertificateRequestV1beta1): Promise<PcrCleanerResult> {
    const { namespace = '', name = '', uid } = pcr.metadata ?? {};
    const log = { namespace, podCertificateRequest: name };
    const path = `/apis/${CERTIFICATES_GROUP}/${this.o.version}/namespaces/${encodeURIComponent(namespace)}/${PCR_RESOURCE}/${encodeURIComponent(name)}`;
    try {
      await this.o.client.write('DELETE', path, { preconditions: { uid } });
      this.logger.info(log, 'podcertificaterequest cleaned up');
      return 'deleted';
    } catch (err) {
      if (isNotFound(err)) return 'gone';
      if (isConflict(err)) {
        this.logger.debug(log, 'podcertificaterequest re-created since cached, judged again next pass');
        return 'conflict';
      }
      this.logger.info({ ...log, err }, 'unable to delete podcertificaterequest');
      return 'error';
    }
  }
}
