/** The controller runtime's public surface (what src/cmd and the reconcilers import). */
export { runController, type ControllerDeps } from './run-controller.js';
export { Manager, type ManagerOptions, type ControllerSpec, type InformerSpec, type Runnable, type KeyMapper } from './manager.js';
export type { Reconciler, ReconcileContext, Result } from './reconcile.js';
export { TerminalError, RequeueError, classifyError, isConflict, isGone, isNotFound, httpStatusOf } from './errors.js';
export { KubeClient, HttpStatusError } from './client/kube-client.js';
export { Informer, type EventHandlers, type DeleteInfo, type InformerOptions } from './informer/informer.js';
export { keyOf, type ReadonlyCache, type Indexers } from './informer/cache.js';
export { clientListWatch, collectionPath, type ListWatch, type ResourceRef } from './informer/list-watch.js';
export { LeaderElector, defaultIdentity, LEADER_ELECTION_DEFAULTS, type LeaderElectionOptions } from './leader-election.js';
export { RateLimitingQueue } from './workqueue/rate-limiting.js';
export { controllerRateLimiter, CSR_RATE_LIMITER, type RateLimiter, type RateLimiterOptions } from './workqueue/rate-limiter.js';
