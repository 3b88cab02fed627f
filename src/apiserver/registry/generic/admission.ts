/**
 * What the registries ask of admission: the server's chain of admission plugins (admission/chain.ts,
 * kube-apiserver's `--enable-admission-plugins`), as opposed to a kind's own `Strategy.admit`. It
 * sees every create, update (with its subresource) and delete after the object was prepared,
 * validated and passed the kind's own checks, and refuses by throwing an ApiError (403 for policy).
 */
import type { KObject } from '../../../api/meta.js';
import type { ResourceInfo, ResourceOf } from '../../../api/resources.js';
import type { RequestContext } from './strategy.js';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface AdmissionAttributes<T extends KObject = KObject> {
  operation: AdmissionOperation;
  info: ResourceInfo;
  /** '' for the main resource. */
  subresource: string;
  namespace: string | undefined;
  name: string;
  /** The object as it will be written; for DELETE, the stored object. */
  object: T;
  /** The stored object, for UPDATE and DELETE. */
  oldObject: T | undefined;
  ctx: RequestContext;
}

/**
 * Whether `a` writes objects of `resource` itself: its main resource or /status (other subresources
 * carry other kinds, such as a TokenRequest). The registry admits only objects of that kind, so they
 * have the resource's type; upstream's plugins assert the admitted object's Go type at this point.
 */
export function writesObjectsOf<T extends KObject>(a: AdmissionAttributes, resource: ResourceOf<T>): a is AdmissionAttributes<T> {
  return a.info.group === resource.group && a.info.plural === resource.plural && (a.subresource === '' || a.subresource === 'status');
}

/**
 * Admission's two phases. `admit` (upstream's MutationInterface) may change `a.object` and runs
 * before validation; `validate` (ValidationInterface) runs after it. Both refuse by throwing (or
 * rejecting) and return a promise only when a plugin has to wait, so most writes cost no turn for it.
 */
export interface Admission {
  admit(a: AdmissionAttributes): Promise<void> | undefined;
  validate(a: AdmissionAttributes): Promise<void> | undefined;
}
