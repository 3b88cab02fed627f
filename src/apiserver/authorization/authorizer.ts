/** What an authorizer is asked and answers (k8s.io/apiserver's authorizer package). */
import type { UserInfo } from '../../api/meta.js';
import type { PolicyRule } from '../../api/rbac.js';
import type { MaybePromise } from '../../lib/maybe-promise.js';

/** What an authorizer is asked (authorizer.Attributes upstream). */
export interface AuthorizationAttributes {
  user: UserInfo;
  verb: string;
  /** Resource requests. */
  apiGroup?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** The raw `fieldSelector` of a list or watch (the Node authorizer scopes pod reads with it). */
  fieldSelector?: string;
  /** Non-resource requests (e.g. /healthz, /api). */
  path?: string;
}

export interface Decision {
  allowed: boolean;
  reason?: string;
}

/** What a user may do in a namespace, as far as an authorizer can tell (RuleResolver.RulesFor upstream). */
export interface UserRules {
  rules: PolicyRule[];
  /** The list may miss permissions (an authorizer that cannot enumerate them). */
  incomplete: boolean;
  errors: string[];
}

export interface Authorizer {
  authorize(attrs: AuthorizationAttributes): Promise<Decision>;
  /**
   * The same decision, given at once when nothing must be waited for (a remembered decision, an
   * in-memory index's answer), else as a promise; may throw where `authorize` rejects. The request
   * pipeline asks this one, so a remembered decision costs it no async step.
   */
  authorizeNow?(attrs: AuthorizationAttributes): MaybePromise<Decision>;
  /** Every rule granting `user` something in `namespace` (cluster-wide ones included); absent: cannot tell. */
  rulesFor?(user: UserInfo, namespace: string): Promise<UserRules>;
}

/** The authorizer's decision, at once when it can give one (authorizeNow), else as a promise. */
export function authorizeNow(authorizer: Authorizer, attrs: AuthorizationAttributes): MaybePromise<Decision> {
  return authorizer.authorizeNow ? authorizer.authorizeNow(attrs) : authorizer.authorize(attrs);
}
