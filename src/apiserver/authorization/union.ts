/**
 * kube-apiserver's authorizer chain (`--authorization-mode=Node,RBAC`): each authorizer is asked in
 * turn and the first allow wins; when none allows, the reasons they gave are joined, one per line,
 * and become the tail of the 403 message. Rules (for SelfSubjectRulesReview) are what each one lists.
 */
import type { Authorizer, Decision, UserRules } from './authorizer.js';

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
    async rulesFor(user, namespace): Promise<UserRules> {
      const out: UserRules = { rules: [], incomplete: false, errors: [] };
      for (const a of chain) {
        const r = a.rulesFor ? await a.rulesFor(user, namespace) : { rules: [], incomplete: true, errors: [] };
        out.rules.push(...r.rules);
        out.incomplete ||= r.incomplete;
        out.errors.push(...r.errors);
      }
      return out;
    },
  };
}
