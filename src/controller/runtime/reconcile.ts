/**
 * The reconcile contract (controller-runtime's, level-based): a reconcile gets only a key, reads the
 * current state from the informer cache, and makes the world match it. It decides on the cached copy
 * and writes with that copy's resourceVersion, never reading first: a stale copy costs a 409, which
 * errors.ts classifies as a requeue. Returning `'done'` forgets the key's backoff; `{ requeueAfter }`
 * runs it again after that many ms; throwing is classified by errors.ts.
 */
import type { Logger } from '../../log/logger.js';

export type Result = 'done' | { requeueAfter: number };

export interface ReconcileContext {
  /** Child logger bound to {controller, key, reconcileID}. */
  logger: Logger;
  /** Aborted when the manager shuts down; pass it to API calls. */
  signal: AbortSignal;
  reconcileID: string;
}

export interface Reconciler {
  reconcile(key: string, ctx: ReconcileContext): Promise<Result>;
}
