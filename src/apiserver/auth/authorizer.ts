/** What an authorizer is asked and answers (k8s.io/apiserver's authorizer package). */
import type { UserInfo } from '../../api/meta.js';

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

export interface Authorizer {
  authorize(attrs: AuthorizationAttributes): Promise<Decision>;
}
