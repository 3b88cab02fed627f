/**
 * Compact field tables of the protobuf messages we decode, from the published field numbers of
 * k8s.io/api and apimachinery (generated.proto). Field names are the JSON names, so a decoded
 * message maps field-for-field onto the JSON object the server works with.
 *
 * A field is `[number, type, flag?]`: flag `r` repeated, `m` map<string, type>, `p` a Go pointer
 * (zero values are meaningful and kept; non-pointer zero values are dropped, as JSON omitempty does).
 * Types are protobuf scalars, a message of these tables, or one of the well-known wrappers in
 * WRAPPERS whose JSON form is not an object.
 */
export type FieldFlag = 'r' | 'm' | 'p';
export type FieldDesc = readonly [id: number, type: string, flag?: FieldFlag];
export type MessageDesc = Readonly<Record<string, FieldDesc>>;

/** Wrapper messages with a non-object JSON form (see protobuf-json.ts for each mapping). */
export const WRAPPERS: Readonly<Record<string, MessageDesc>> = {
  Time: { seconds: [1, 'int64'], nanos: [2, 'int32'] },
  MicroTime: { seconds: [1, 'int64'], nanos: [2, 'int32'] },
  Quantity: { string: [1, 'string'] },
  IntOrString: { type: [1, 'int64'], intVal: [2, 'int32'], strVal: [3, 'string'] },
  RawExtension: { raw: [1, 'bytes'] },
  FieldsV1: { Raw: [1, 'bytes'] },
  ExtraValue: { items: [1, 'string', 'r'] },
};

export const META_MESSAGES: Readonly<Record<string, MessageDesc>> = {
  ObjectMeta: {
    name: [1, 'string'],
    generateName: [2, 'string'],
    namespace: [3, 'string'],
    selfLink: [4, 'string'],
    uid: [5, 'string'],
    resourceVersion: [6, 'string'],
    generation: [7, 'int64'],
    creationTimestamp: [8, 'Time'],
    deletionTimestamp: [9, 'Time'],
    deletionGracePeriodSeconds: [10, 'int64', 'p'],
    labels: [11, 'string', 'm'],
    annotations: [12, 'string', 'm'],
    ownerReferences: [13, 'OwnerReference', 'r'],
    finalizers: [14, 'string', 'r'],
    managedFields: [17, 'ManagedFieldsEntry', 'r'],
  },
  OwnerReference: {
    kind: [1, 'string'],
    name: [3, 'string'],
    uid: [4, 'string'],
    apiVersion: [5, 'string'],
    controller: [6, 'bool', 'p'],
    blockOwnerDeletion: [7, 'bool', 'p'],
  },
  ManagedFieldsEntry: {
    manager: [1, 'string'],
    operation: [2, 'string'],
    apiVersion: [3, 'string'],
    time: [4, 'Time'],
    fieldsType: [6, 'string'],
    fieldsV1: [7, 'FieldsV1'],
    subresource: [8, 'string'],
  },
  LabelSelector: { matchLabels: [1, 'string', 'm'], matchExpressions: [2, 'LabelSelectorRequirement', 'r'] },
  LabelSelectorRequirement: { key: [1, 'string'], operator: [2, 'string'], values: [3, 'string', 'r'] },
  /** runtime.Unknown: the `k8s\0` envelope around every protobuf body. */
  Unknown: {
    typeMeta: [1, 'TypeMeta'],
    raw: [2, 'bytes'],
    contentEncoding: [3, 'string'],
    contentType: [4, 'string'],
  },
  TypeMeta: { apiVersion: [1, 'string'], kind: [2, 'string'] },
};
