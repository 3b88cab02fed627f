/**
 * Denies confirmed against the store in batches. Where the RBAC index may trail the store (etcd: a
 * grant written through another replica reaches this one's watch a round trip later), a deny from the
 * index is confirmed by reading the bindings and roles from the store. That read must start after the
 * request arrived, so that every grant acknowledged before it is seen; but nothing requires one read
 * per request. Every deny that arrives before a batch's reads start (the next turn of the event loop)
 * shares them: each scope's bindings are listed once per batch and each role read once, however many
 * forbidden requests an anonymous client or a join token sends meanwhile.
 */
import type { RoleBinding } from '../../../api/rbac.js';
import { TurnBatch } from '../../../lib/turn-batch.js';
import type { GrantSource, RoleRules } from './rbac-authorizer.js';

export class DenyConfirmations {
  private readonly batch = new TurnBatch(() => this.reads());

  /** `store`: the grants as the store holds them, each call a read. */
  constructor(private readonly store: GrantSource) {}

  /** Store reads that all start after this call; shared with the denies that join the same batch. */
  join(): Promise<GrantSource> {
    return this.batch.join();
  }

  /** The store's grants, each list and role read at most once, on first use. */
  private reads(): GrantSource {
    const lists = new Map<string, Promise<RoleBinding[]> | RoleBinding[]>();
    const roles = new Map<string, Promise<RoleRules> | RoleRules>();
    return {
      // The store lists a scope's bindings whoever asks: one list serves every user of the batch.
      bindings: (user, bindingNs) => {
        let list = lists.get(bindingNs);
        if (!list) lists.set(bindingNs, (list = this.store.bindings(user, bindingNs)));
        return list;
      },
      role: (ref, namespace) => {
        // A Role's namespace is the binding's; a ClusterRole has none.
        const key = JSON.stringify([ref?.kind, ref?.kind === 'Role' ? namespace : '', ref?.name]);
        let role = roles.get(key);
        if (!role) roles.set(key, (role = this.store.role(ref, namespace)));
        return role;
      },
    };
  }
}
