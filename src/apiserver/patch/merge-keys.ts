/**
 * The strategic-merge-patch metadata of the kinds we serve: upstream reads it from the Go struct
 * tags (`patchStrategy`, `patchMergeKey`); we list it per kind. Only list fields need an entry:
 * maps (labels, annotations, Secret/ConfigMap data, ...) merge as maps with no metadata, and a
 * list without an entry is atomic (replaced whole), which is upstream's rule for untagged lists.
 */

export interface ListStrategy {
  /** `merge` merges by mergeKey (lists of objects) or as a set (lists of scalars). */
  strategy: 'merge' | 'replace';
  mergeKey?: string;
}

/** The schema of one object: list fields with their strategy, and nested objects to descend into. */
export interface PatchSchema {
  lists?: Record<string, ListStrategy & { items?: PatchSchema }>;
  fields?: Record<string, PatchSchema>;
}

const merge = (mergeKey?: string, items?: PatchSchema): ListStrategy & { items?: PatchSchema } =>
  mergeKey ? { strategy: 'merge', mergeKey, ...(items ? { items } : {}) } : { strategy: 'merge' };

const OBJECT_META: PatchSchema = {
  lists: { finalizers: merge(), ownerReferences: merge('uid') },
};

const CONTAINER: PatchSchema = {
  lists: {
    ports: merge('containerPort'),
    env: merge('name'),
    volumeMounts: merge('mountPath'),
    volumeDevices: merge('devicePath'),
  },
};

const POD_SPEC: PatchSchema = {
  lists: {
    containers: merge('name', CONTAINER),
    initContainers: merge('name', CONTAINER),
    ephemeralContainers: merge('name', CONTAINER),
    volumes: merge('name'),
    imagePullSecrets: merge('name'),
    hostAliases: merge('ip'),
    topologySpreadConstraints: merge('topologyKey'),
    resourceClaims: merge('name'),
    schedulingGates: merge('name'),
  },
};

const POD_STATUS: PatchSchema = {
  lists: { conditions: merge('type'), podIPs: merge('ip'), hostIPs: merge('ip') },
};

const withMeta = (rest: Record<string, PatchSchema> = {}, lists?: PatchSchema['lists']): PatchSchema => ({
  fields: { metadata: OBJECT_META, ...rest },
  ...(lists ? { lists } : {}),
});

/**
 * Keyed by `group/Kind` (core group empty). Notable upstream facts kept here: ServiceAccount
 * imagePullSecrets and CSR status.conditions carry no patch strategy, so SMP replaces them
 * (CSR conditions are a listType=map only for server-side apply); RBAC rules and subjects and
 * Node taints are atomic too.
 */
const SCHEMAS: Record<string, PatchSchema> = {
  '/Pod': withMeta({ spec: POD_SPEC, status: POD_STATUS }),
  '/ServiceAccount': withMeta({}, { secrets: merge('name') }),
  '/Node': withMeta({
    spec: { lists: { podCIDRs: merge() } },
    status: { lists: { addresses: merge('type'), conditions: merge('type') } },
  }),
  '/Namespace': withMeta({ status: { lists: { conditions: merge('type') } } }),
};

/** The patch schema of a kind; kinds without special lists still get ObjectMeta's. */
export function patchSchemaFor(group: string, kind: string): PatchSchema {
  return SCHEMAS[`${group}/${kind}`] ?? withMeta();
}
