/**
 * csrcleaner: deletes CSRs that are done with (issued, denied or failed for an hour, pending for a
 * day, or holding an expired certificate), as kube-controller-manager does. It runs at start and
 * then every interval. It judges the informer's copy and deletes with that copy's uid and
 * resourceVersion as preconditions: a CSR re-created under the same name, or changed since the copy
 * (approved, issued...), is left for the next pass to judge again. A CSR already gone is fine.
 */
import type { CertificateSigningRequest } from '../../api/certificates.js';
import { everyInterval, type Clock } from '../../lib/clock.js';
import type { Logger } from '../../log/logger.js';
import { isConflict, isNotFound } from '../../lib/api-errors.js';
import type { ReadonlyCache } from '../informer/cache.js';
import type { Runnable } from '../runtime/manager.js';
import { cleanReason, DEFAULT_CLEANER_DURATIONS, type CleanReason, type CleanerDurations } from './cleaner-policy.js';
import type { CsrApi } from '../csr/csr-api.js';

export const CLEANER_NAME = 'csrcleaner';

export interface CleanerOptions {
  api: Pick<CsrApi, 'delete'>;
  csrs: ReadonlyCache<CertificateSigningRequest>;
  clock: Clock;
  logger: Logger;
  /** Polling interval in ms (upstream 1 h). */
  intervalMs?: number;
  durations?: CleanerDurations;
}

export class Cleaner implements Runnable {
  readonly name = CLEANER_NAME;
  readonly needLeaderElection = true;
  private readonly logger: Logger;

  constructor(private readonly o: CleanerOptions) {
    this.logger = o.logger.child({ controller: CLEANER_NAME });
  }

  async start(signal: AbortSignal): Promise<void> {
    await everyInterval(this.o.clock, this.o.intervalMs ?? 3_600_000, signal, () => this.runOnce());
  }

  /** One pass; returns the names deleted, with the rule that matched. */
  async runOnce(): Promise<{ name: string; reason: CleanReason }[]> {
    const deleted: { name: string; reason: CleanReason }[] = [];
    for (const csr of this.o.csrs.list()) {
      const reason = this.reasonFor(csr);
      if (!reason) continue;
      const name = csr.metadata?.name ?? '';
      try {
        await this.o.api.delete(csr);
        deleted.push({ name, reason });
        this.logger.info({ csr: name, decision: 'deleted', reason }, 'csr cleaned up');
      } catch (err) {
        if (isNotFound(err)) continue;
        if (isConflict(err)) this.logger.debug({ csr: name }, 'csr changed since cached, judged again next pass');
        else this.logger.info({ err, csr: name }, 'unable to delete csr');
      }
    }
    return deleted;
  }

  private reasonFor(csr: CertificateSigningRequest): CleanReason | undefined {
    return cleanReason(csr, this.o.clock.now(), this.o.durations ?? DEFAULT_CLEANER_DURATIONS);
  }
}
