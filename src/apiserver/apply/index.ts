/** Server-side apply and managedFields bookkeeping for every write. */
export { type ApplyOptions, serverSideApply } from './apply.js';
export { type UpdateEntry, trackUpdate } from './update.js';
export { ownershipChanged } from './managers.js';
