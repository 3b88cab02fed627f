/**
 * Admission plugins that span kinds (kube-apiserver's `--enable-admission-plugins`), as opposed to
 * a kind's own `Strategy.admit`: they see every create, update (with its subresource) and delete,
 * after the object was prepared, and refuse by throwing an ApiError (403 for policy).
 */
import type { KObject } from '../../../api/meta.js';
import type { ResourceInfo } from '../../../api/resources.js';
import type { RequestContext } from './strategy.js';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface AdmissionAttributes {
  operation: AdmissionOperation;
  info: ResourceInfo;
  /** '' for the main resource. */
  subresource: string;
  namespace: string | undefined;
  name: string;
  /** The object as it will be written; for DELETE, the stored object. */
  object: KObject;
  /** The stored object, for UPDATE and DELETE. */
  oldObject: KObject | undefined;
  ctx: RequestContext;
}

export interface AdmissionPlugin {
  admit(a: AdmissionAttributes): Promise<void>;
}
