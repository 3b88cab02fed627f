/**
 * authentication.k8s.io/v1 TokenRequest (serviceaccounts/token) and TokenReview as they travel as
 * JSON, over client-node's models: the served schema models every field.
 */
import type { V1TokenRequestSpec, V1TokenRequestStatus, V1TokenReviewSpec, V1TokenReviewStatus } from '@kubernetes/client-node';
import type { KObject } from './meta.js';
import type { Wire } from './wire.js';

export type TokenRequestSpec = Wire<V1TokenRequestSpec>;
export type BoundObjectReference = NonNullable<TokenRequestSpec['boundObjectRef']>;

export interface TokenRequest extends KObject {
  spec?: TokenRequestSpec;
  status?: Wire<V1TokenRequestStatus>;
}

export interface TokenReview extends KObject {
  spec?: Wire<V1TokenReviewSpec>;
  status?: Wire<V1TokenReviewStatus>;
}
