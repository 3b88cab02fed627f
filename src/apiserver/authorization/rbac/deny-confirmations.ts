/**
 * Denies confirmed against the store in batches. Where the RBAC index may trail the store (etcd: a
 * grant written through another replica reaches this one's watch a round trip later), a deny from the
 * index is confirmed by reading the bindings and roles from the store. That read must start after the
 * request arrived, so that every grant acknowledged before it is seen; but nothing requires one read
 * per request. Every deny that arrives before a batch's reads start (the next turn of the event loop)
 * shares them: each scope's bindings are listed once per batch and each role read once, however many
 * forbidden requests an anonymous client or a join token sends meanwhile.
 */
import type { PolicyRule, RoleBinding, RoleRef } from '../../../api/rbac.js';
import type { ObjectReader } from '../../authentication/types.js';
import { CLUSTER_ROLE_BINDINGS, ROLE_BINDINGS } from '../../authentication/resource-infos.js';

type RoleRules = { rules: PolicyRule[] } | { error: string };

/** The reads of one batch, each made at most once, on first use. */
export interface StoreReads {
  /** The bindings of `bindingNs` ('' for ClusterRoleBindings), in key order. */
  bindings(bindingNs: string): Promise<RoleBinding[]>;
  role(ref: RoleRef | undefined, namespace: string): Promise<RoleRules>;
}

export class DenyConfirmations {
  /** The batch that has not started reading yet, which a deny arriving now joins. */
  private next: Promise<StoreReads> | undefined;

  constructor(
    private readonly objects: ObjectReader,
    /** Reads a binding's role from the store (roleRefRules). */
    private readonly readRole: (objects: ObjectReader, ref: RoleRef | undefined, namespace: string) => Promise<RoleRules>,
  ) {}

  /** Store reads that all start after this call; shared with the denies that join the same batch. */
  join(): Promise<StoreReads> {
    this.next ??= new Promise((resolve) =>
      setImmediate(() => {
        // Reads start now: a deny arriving from here on waits for the next batch.
        this.next = undefined;
        resolve(this.reads());
      }),
    );
    return this.next;
  }

  private reads(): StoreReads {
    const lists = new Map<string, Promise<RoleBinding[]>>();
    const roles = new Map<string, Promise<RoleRules>>();
    return {
      bindings: (bindingNs) => {
        let list = lists.get(bindingNs);
        if (!list) {
          list = bindingNs ? this.objects.list(ROLE_BINDINGS, bindingNs) : this.objects.list(CLUSTER_ROLE_BINDINGS, undefined);
          lists.set(bindingNs, list);
        }
        return list;
      },
      role: (ref, namespace) => {
        // A Role's namespace is the binding's; a ClusterRole has none.
        const key = JSON.stringify([ref?.kind, ref?.kind === 'Role' ? namespace : '', ref?.name]);
        let role = roles.get(key);
        if (!role) {
          role = this.readRole(this.objects, ref, namespace);
          roles.set(key, role);
        }
        return role;
      },
    };
  }
}
