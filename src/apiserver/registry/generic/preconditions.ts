/**
 * A failed storage precondition (upstream's storage.Preconditions, checked by GuaranteedUpdate before
 * the update runs): a 409 whose text is the StorageError upstream's storage returns, naming the key
 * kube-apiserver keeps the object at in etcd under its default prefix.
 */
import { type ApiError, type Target, errors } from '../../http/errors.js';
import { EtcdKeys } from '../../storage/etcd/etcd-keys.js';

const UPSTREAM_KEYS = new EtcdKeys('/registry');

export function storagePreconditionFailed(target: Target, key: string, field: 'UID' | 'ResourceVersion', wanted: string, found = ''): ApiError {
  const why = `Precondition failed: ${field} in precondition: ${wanted}, ${field} in object meta: ${found}`;
  return errors.conflict(target, `StorageError: invalid object, Code: 4, Key: ${UPSTREAM_KEYS.toEtcd(key)}, ResourceVersion: 0, AdditionalErrorMsg: ${why}`);
}
