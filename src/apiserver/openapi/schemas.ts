/** Every schema we publish, and lookups by group-version-kind and by reference. */
import { type GVK, REF_PREFIX, type Schema, type Schemas } from './builder.js';
import { AUTH_SCHEMAS } from './schemas-auth.js';
import { CORE_SCHEMAS } from './schemas-core.js';
import { GROUP_SCHEMAS } from './schemas-groups.js';
import { META_SCHEMAS } from './schemas-meta.js';
import { POD_SCHEMAS } from './schemas-pod.js';
import { POD_CERTIFICATE_SCHEMAS } from './schemas-pod-certificates.js';

export const ALL_SCHEMAS: Readonly<Schemas> = {
  ...META_SCHEMAS,
  ...CORE_SCHEMAS,
  ...POD_SCHEMAS,
  ...AUTH_SCHEMAS,
  ...GROUP_SCHEMAS,
  ...POD_CERTIFICATE_SCHEMAS,
};

const key = (g: GVK): string => `${g.group}/${g.version}/${g.kind}`;

const BY_GVK: ReadonlyMap<string, string> = new Map(
  Object.entries(ALL_SCHEMAS).flatMap(([name, s]) =>
    ((s['x-kubernetes-group-version-kind'] ?? []) as GVK[]).map((g): [string, string] => [key(g), name]),
  ),
);

/** The definition name of a kind's schema, e.g. io.k8s.api.core.v1.ServiceAccount. */
export function schemaNameFor(gvk: GVK): string | undefined {
  return BY_GVK.get(key(gvk));
}

/** The schema a `$ref` points at, or undefined for a dangling or foreign reference. */
export function resolveRef(ref: string): Schema | undefined {
  return ref.startsWith(REF_PREFIX) ? ALL_SCHEMAS[ref.slice(REF_PREFIX.length)] : undefined;
}

/** Names of every schema reachable from `roots` through `$ref`s (roots included). */
export function reachable(roots: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
    } else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') addName(v.slice(REF_PREFIX.length));
        else visit(v);
      }
    }
  };
  const addName = (name: string): void => {
    if (seen.has(name) || !ALL_SCHEMAS[name]) return;
    seen.add(name);
    visit(ALL_SCHEMAS[name]);
  };
  for (const r of roots) addName(r);
  return seen;
}
