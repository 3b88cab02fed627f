/**
 * Objects as etcd values: JSON without metadata.resourceVersion, which is the key's mod revision
 * (kube-apiserver's etcd3 versioner stores objects the same way).
 */
import type { KObject } from '../../../api/meta.js';
import { deepFreeze } from '../../../lib/json.js';

/** The stored value: the object without its resourceVersion, which etcd's revision stands for. */
export function encode(object: KObject): Buffer {
  const { resourceVersion: _, ...metadata } = object.metadata ?? {};
  return Buffer.from(JSON.stringify({ ...object, metadata }));
}

/** A stored value as the deep-frozen object with resourceVersion set to `revision`. */
export function decode(value: Buffer, revision: number): KObject {
  const object = JSON.parse(value.toString('utf8')) as KObject;
  object.metadata = { ...object.metadata, resourceVersion: String(revision) };
  return deepFreeze(object) as KObject;
}

