/**
 * kube-apiserver's authorizer chain (`--authorization-mode=Node,RBAC`): each authorizer is asked in
 * turn and the first allow wins; when none allows, the reasons they gave are joined, one per line,
 * and become the tail of the 403 message. Rules (for SelfSubjectRulesReview) are what each one lists.
 */
import { isPromise, promised, type MaybePromise } from '../../lib/maybe-promise.js';
import { authorizeNow, type AuthorizationAttributes, type Authorizer, type Decision, type UserRules } from './authorizer.js';

export function unionAuthorizer(chain: readonly Authorizer[]): Authorizer {
  /** Asks the chain from `i` on; synchronously as long as each authorizer answers at once. */
  const from = (attrs: AuthorizationAttributes, i: number, reasons: string[]): MaybePromise<Decision> => {
    for (; i < chain.length; i++) {
      const d = authorizeNow(chain[i] as Authorizer, attrs);
      if (isPromise(d)) return d.then((later) => (later.allowed ? later : from(attrs, i + 1, withReason(reasons, later))));
      if (d.allowed) return d;
      withReason(reasons, d);
    }
    return { allowed: false, reason: reasons.join('\n') };
  };
  const authorizeNowOf = (attrs: AuthorizationAttributes): MaybePromise<Decision> => from(attrs, 0, []);
  return {
    authorize: (attrs) => promised(() => authorizeNowOf(attrs)),
    authorizeNow: authorizeNowOf,
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

function withReason(reasons: string[], d: Decision): string[] {
  if (d.reason) reasons.push(d.reason);
  return reasons;
}
