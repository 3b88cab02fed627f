/**
 * What the registries ask of admission: the server's chain of admission plugins (admission/chain.ts,
 * kube-apiserver's `--enable-admission-plugins`), as opposed to a kind's own `Strategy.admit`. It
 * sees every create, update (with its subresource) and delete after the object was prepared,
 * validated and passed the kind's own checks, and refuses by throwing an ApiError (403 for policy).
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

/** The validating phase of admission (upstream's ValidationInterface). */
export interface Admission {
  validate(a: AdmissionAttributes): Promise<void>;
}
