/** What an authorizer is asked and answers (k8s.io/apiserver's authorizer package). */
import type { UserInfo } from '../../api/meta.js';
import type { PolicyRule } from '../../api/rbac.js';

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
  /** Every rule granting `user` something in `namespace` (cluster-wide ones included); absent: cannot tell. */
  rulesFor?(user: UserInfo, namespace: string): Promise<UserRules>;
}
