/**
 * RBAC decisions remembered while the RbacIndex stays as it was. kube-apiserver wraps its authorizers
 * in a decision cache with a TTL, which keeps a revoked grant working for up to its TTL; here an
 * entry lives only as long as the index's generation: any write of any Role, ClusterRole or binding
 * (as the index sees it) drops every entry before the next decision. A deny is kept only when it was
 * final (the index held every acknowledged write): on etcd a deny is confirmed against the store each
 * time, since a grant written through another replica may not have reached the index yet. Denies are
 * kept apart from allows, so a caller varying its forbidden requests pushes out only denies.
 *
 * A decision depends on the user's name and groups and the request's verb, group, resource,
 * subresource, namespace or non-resource path, and on the object's name only through rules with
 * resourceNames: a decision whose walk met no such rule is kept for every name.
 */
import type { AuthorizationAttributes, Decision } from '../authorizer.js';
import { BoundedMap } from '../../../lib/bounded-map.js';

/** Entries kept at most (oldest forgotten first): a few MB, whatever the number of users. */
const LIMIT = 20_000;

/** Each part prefixed by its length, so no name holding the separator can pass for another key. */
function keyOf(parts: readonly string[]): string {
  let key = '';
  for (const p of parts) key += `${p.length}:${p}`;
  return key;
}

export class DecisionCache {
  private readonly allows = new BoundedMap<string, Decision>(LIMIT);
  private readonly denies = new BoundedMap<string, Decision>(LIMIT);
  private generation = -1;

  /** `generation`: the index's, now; a different one than the entries were made at empties the cache. */
  get(a: AuthorizationAttributes, generation: number): Decision | undefined {
    if (generation !== this.generation) {
      this.allows.clear();
      this.denies.clear();
      this.generation = generation;
      return undefined;
    }
    const key = DecisionCache.key(a);
    const named = a.name ? key + keyOf([a.name]) : undefined;
    for (const entries of [this.allows, this.denies]) {
      const found = entries.get(key) ?? (named ? entries.get(named) : undefined);
      if (found) return found;
    }
    return undefined;
  }

  /**
   * Keeps a decision made at `generation`: an allow, or a deny the caller found final. `byName`: the
   * walk met a rule with resourceNames, so the decision holds for this object's name only.
   */
  set(a: AuthorizationAttributes, generation: number, decision: Decision, byName: boolean): void {
    if (generation !== this.generation) return;
    const key = DecisionCache.key(a);
    (decision.allowed ? this.allows : this.denies).set(byName ? key + keyOf([a.name ?? '']) : key, decision);
  }

  private static key(a: AuthorizationAttributes): string {
    const target = a.resource === undefined ? ['N', a.path ?? ''] : ['R', a.apiGroup ?? '', a.resource, a.subresource ?? '', a.namespace ?? ''];
    return keyOf([a.verb, ...target, a.user.username, String(a.user.groups.length), ...a.user.groups]) + '|';
  }
}
