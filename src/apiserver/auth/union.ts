/**
 * kube-apiserver's authorizer chain (`--authorization-mode=Node,RBAC`): each authorizer is asked in
 * turn and the first allow wins; when none allows, the reasons they gave are joined, one per line,
 * and become the tail of the 403 message.
 */
import type { Authorizer, Decision } from './authorizer.js';

export function unionAuthorizer(chain: readonly Authorizer[]): Authorizer {
  return {
    async authorize(attrs): Promise<Decision> {
      const reasons: string[] = [];
      for (const a of chain) {
        const d = await a.authorize(attrs);
        if (d.allowed) return d;
        if (d.reason) reasons.push(d.reason);
      }
      return { allowed: false, reason: reasons.join('\n') };
    },
  };
}
