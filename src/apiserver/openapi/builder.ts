/**
 * A compact vocabulary for writing OpenAPI v3 schemas as TypeScript data. Schema names are the
 * upstream definition names (io.k8s.api.<group>.<version>.<Type>), because kubectl explain and
 * strategic-merge tooling look kinds up by x-kubernetes-group-version-kind, not by name, but
 * humans and caches compare documents with upstream.
 */
export type Schema = Record<string, unknown>;
export type Schemas = Record<string, Schema>;

export interface GVK {
  group: string;
  version: string;
  kind: string;
}

export const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
export const CORE = 'io.k8s.api.core.v1.';
export const REF_PREFIX = '#/components/schemas/';

/**
 * Go type names of schemas (`v1.LeaseSpec`, `[]v1.KeyUsage`), kept beside the schemas and never
 * published: the decoder's type errors name the Go type of the field they hit, and a schema alone
 * cannot tell a named Go type from its underlying one.
 */
const GO_TYPES = new WeakMap<object, string>();

/** Records the Go type `schema` stands for; returns the schema. */
export function goTyped<T extends Schema>(goType: string, schema: T): T {
  GO_TYPES.set(schema, goType);
  return schema;
}

/** The Go type recorded for `schema`, if any. */
export function goTypeName(schema: Schema): string | undefined {
  return GO_TYPES.get(schema);
}

/** A string field of a named Go string type (an enum such as `v1.SecretType`). */
export const enumStr = (goType: string, description?: string): Schema => goTyped(goType, str(description));

function described(description?: string): Schema {
  return description ? { description } : {};
}

export const ref = (name: string, description?: string): Schema =>
  description ? { description, allOf: [{ $ref: REF_PREFIX + name }] } : { $ref: REF_PREFIX + name };

export const str = (description?: string): Schema => ({ type: 'string', ...described(description) });
export const bool = (description?: string): Schema => ({ type: 'boolean', ...described(description) });
export const int32 = (description?: string): Schema => ({ type: 'integer', format: 'int32', ...described(description) });
export const int64 = (description?: string): Schema => ({ type: 'integer', format: 'int64', ...described(description) });
/** []byte fields travel as base64 strings in JSON. */
export const bytes = (description?: string): Schema => ({ type: 'string', format: 'byte', ...described(description) });
export const time = (description?: string): Schema => ref(`${META}Time`, description);
export const microTime = (description?: string): Schema => ref(`${META}MicroTime`, description);
export const quantity = (description?: string): Schema => ref('io.k8s.apimachinery.pkg.api.resource.Quantity', description);
export const intOrString = (description?: string): Schema =>
  ref('io.k8s.apimachinery.pkg.util.intstr.IntOrString', description);
/** Free-form content (RawExtension payloads, opaque sub-structures we do not model). */
export const preserve = (description?: string): Schema => ({
  type: 'object',
  'x-kubernetes-preserve-unknown-fields': true,
  ...described(description),
});

export const map = (values: Schema, description?: string): Schema => ({
  type: 'object',
  additionalProperties: values,
  ...described(description),
});

export interface ListOpts {
  description?: string;
  /** A named slice type (`v1.ExtraValue`). */
  goType?: string;
  /** Defaults to atomic, as upstream's generator does for lists without markers. */
  listType?: 'atomic' | 'set' | 'map';
  mapKeys?: string[];
  /** Strategic-merge-patch metadata: `merge` with a merge key, or `merge` alone for scalar sets. */
  patchStrategy?: string;
  patchMergeKey?: string;
}

export const arr = (items: Schema, opts: ListOpts = {}): Schema => {
  const s: Schema = { type: 'array', items, ...described(opts.description) };
  s['x-kubernetes-list-type'] = opts.listType ?? 'atomic';
  if (opts.mapKeys) s['x-kubernetes-list-map-keys'] = opts.mapKeys;
  if (opts.patchMergeKey) s['x-kubernetes-patch-merge-key'] = opts.patchMergeKey;
  if (opts.patchStrategy) s['x-kubernetes-patch-strategy'] = opts.patchStrategy;
  return opts.goType ? goTyped(opts.goType, s) : s;
};

/** A list merged by key: list-type map for apply, patch merge key for strategic merge. */
export const keyedList = (items: Schema, key: string, description?: string): Schema =>
  arr(items, { listType: 'map', mapKeys: [key], patchStrategy: 'merge', patchMergeKey: key, description });

export interface ObjOpts {
  description?: string;
  /** The Go struct this object decodes into, for schemas not registered under their own name. */
  goType?: string;
  required?: string[];
  gvk?: GVK[];
}

export const obj = (properties: Record<string, Schema>, opts: ObjOpts = {}): Schema => {
  const s: Schema = { type: 'object', ...described(opts.description), properties };
  if (opts.required?.length) s.required = opts.required;
  if (opts.gvk) s['x-kubernetes-group-version-kind'] = opts.gvk;
  return opts.goType ? goTyped(opts.goType, s) : s;
};

function apiVersionOf(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

const TYPE_META = (group: string, version: string): Record<string, Schema> => ({
  apiVersion: str(`APIVersion defines the versioned schema of this representation of an object (${apiVersionOf(group, version)}).`),
  kind: str('Kind is a string value representing the REST resource this object represents.'),
});

/** A top-level kind: TypeMeta, ObjectMeta and the given fields, tagged with its GVK. */
export const kindSchema = (
  gvk: GVK,
  properties: Record<string, Schema>,
  opts: Omit<ObjOpts, 'gvk'> = {},
): Schema =>
  obj(
    { ...TYPE_META(gvk.group, gvk.version), metadata: ref(`${META}ObjectMeta`, 'Standard object metadata.'), ...properties },
    { ...opts, gvk: [gvk] },
  );

/** The `<Kind>List` schema for a kind named `itemName`. */
export const listSchema = (gvk: GVK, itemName: string): Schema =>
  obj(
    {
      ...TYPE_META(gvk.group, gvk.version),
      items: arr(ref(itemName), { description: `List of ${gvk.kind} objects.` }),
      metadata: ref(`${META}ListMeta`, 'Standard list metadata.'),
    },
    { required: ['items'], gvk: [{ ...gvk, kind: `${gvk.kind}List` }], description: `${gvk.kind}List is a list of ${gvk.kind} objects.` },
  );

/** Registers a kind and its list under their upstream names. */
export function kindAndList(prefix: string, gvk: GVK, schema: Schema): Schemas {
  return { [prefix + gvk.kind]: schema, [`${prefix}${gvk.kind}List`]: listSchema(gvk, prefix + gvk.kind) };
}
