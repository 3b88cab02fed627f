/**
 * authorization.k8s.io/v1 access reviews as they travel as JSON, over client-node's models: the
 * served schema models every field. SubjectAccessReview's spec also types the Local and Self kinds'
 * (a Self review's spec is a subset of it).
 */
import type { V1SelfSubjectRulesReviewSpec, V1SubjectAccessReviewSpec, V1SubjectAccessReviewStatus } from '@kubernetes/client-node';
import type { KObject } from './meta.js';
import type { Wire } from './wire.js';

export type SubjectAccessReviewSpec = Wire<V1SubjectAccessReviewSpec>;

export interface SubjectAccessReview extends KObject {
  spec?: SubjectAccessReviewSpec;
  status?: Wire<V1SubjectAccessReviewStatus>;
}

export interface SelfSubjectRulesReview extends KObject {
  spec?: Wire<V1SelfSubjectRulesReviewSpec>;
}
