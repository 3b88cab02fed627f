/**
 * Objects as etcd values: JSON without metadata.resourceVersion, which is the key's mod revision
 * (kube-apiserver's etcd3 versioner stores objects the same way), transformed by encryption at rest
 * for the keys it claims, with the etcd key as the authenticated data, as kube-apiserver does (so
 * `etcdctl get` shows the same `k8s:enc:...` values).
 */
import type { KObject } from '../../../api/meta.js';
import { deepFreeze } from '../../../lib/json.js';
import { assertPlain, type ValueTransformer } from '../value-transformer.js';

/** The object's JSON without its resourceVersion, which etcd's revision stands for. */
export function encode(object: KObject): Buffer {
  const { resourceVersion: _, ...metadata } = object.metadata ?? {};
  return Buffer.from(JSON.stringify({ ...object, metadata }));
}

/** JSON from `encode` as the deep-frozen object with resourceVersion set to `revision`. */
export function decode(json: Uint8Array, revision: number): KObject {
  const object = JSON.parse(Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8')) as KObject;
  object.metadata = { ...object.metadata, resourceVersion: String(revision) };
  return deepFreeze(object) as KObject;
}

/** A decoded object as it reads at another revision (a deleted one at the delete's). */
export function atRevision(object: KObject, revision: number): KObject {
  return deepFreeze({ ...object, metadata: { ...object.metadata, resourceVersion: String(revision) } }) as KObject;
}

/** How values are stored in etcd: `key` is the Store key, `etcdKey` the etcd key it is stored under. */
export class EtcdValues {
  constructor(private readonly transformer: ValueTransformer | undefined) {}

  /** The etcd value of `json` (from `encode`). Throws StoreError 'Unavailable' when a KMS plugin is needed and down. */
  seal(key: string, etcdKey: string, json: Buffer): Buffer {
    const transform = this.transformer?.forKey(key);
    return transform ? Buffer.from(transform.toStorage(json, etcdKey)) : json;
  }

  /** Whether a value encryption at rest claims was stored otherwise than it would be now. */
  isStale(key: string, value: Uint8Array): boolean {
    return this.transformer?.forKey(key)?.isStale(value) ?? false;
  }

  /** The object an etcd value holds; a promise only when a KMS plugin had to decrypt its DEK. */
  open(key: string, etcdKey: string, value: Uint8Array, revision: number): KObject | Promise<KObject> {
    const transform = this.transformer?.forKey(key);
    if (!transform) {
      assertPlain(value, key);
      return decode(value, revision);
    }
    const plain = transform.fromStorage(value, etcdKey);
    return plain instanceof Uint8Array ? decode(plain, revision) : plain.then((p) => decode(p, revision));
  }
}
