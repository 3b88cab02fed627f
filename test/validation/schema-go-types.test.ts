/**
 * Every field of every kind we serve decodes with a Go type name as kube-apiserver's decoder prints
 * it: a struct the schemas do not name would surface in an error as `interface {}`.
 */
import { RESOURCES } from '../../src/api/resources.js';
import type { Schema } from '../../src/apiserver/openapi/builder.js';
import { schemaFor } from '../../src/apiserver/openapi/schema-for.js';
import { goKindOf, goTypeOf } from '../../src/apiserver/openapi/schema-walk.js';

const KINDS = RESOURCES.flatMap((r) => [r, ...(r.subresources ?? [])]).map((r) => ({ group: r.group, version: r.version, kind: r.kind }));

/** `path → Go type` of every typed node reachable from a kind's schema. */
function goTypes(schema: Schema, path = '', out = new Map<string, string>()): Map<string, string> {
  const kind = goKindOf(schema);
  if (kind === 'any') return out;
  out.set(path, goTypeOf(schema));
  if (kind === 'struct') for (const [k, v] of Object.entries(schema.properties as Record<string, Schema>)) goTypes(v, `${path}.${k}`, out);
  if (kind === 'map') goTypes(schema.additionalProperties as Schema, `${path}{}`, out);
  if (kind === 'slice') goTypes(schema.items as Schema, `${path}[]`, out);
  return out;
}

describe('Go type names of the served kinds', () => {
  it.each(KINDS.map((k) => [`${k.group}/${k.version}/${k.kind}`, k] as const))('%s: every struct is named', (_name, gvk) => {
    const schema = schemaFor(gvk.group, gvk.version, gvk.kind);
    expect(schema).toBeDefined();
    const unnamed = [...goTypes(schema as Schema)].filter(([, t]) => t.includes('interface {}'));
    expect(unnamed).toEqual([]);
  });

  it.each([
    ['', 'v1', 'ServiceAccount', '.secrets', '[]v1.ObjectReference'],
    ['', 'v1', 'Secret', '.data', 'map[string][]uint8'],
    ['', 'v1', 'Secret', '.metadata.labels', 'map[string]string'],
    ['coordination.k8s.io', 'v1', 'Lease', '.spec', 'v1.LeaseSpec'],
    ['coordination.k8s.io', 'v1', 'Lease', '.spec.leaseDurationSeconds', 'int32'],
    ['certificates.k8s.io', 'v1', 'CertificateSigningRequest', '.spec.usages', '[]v1.KeyUsage'],
    ['certificates.k8s.io', 'v1', 'CertificateSigningRequest', '.spec.extra', 'map[string]v1.ExtraValue'],
    ['apps', 'v1', 'ControllerRevision', '.revision', 'int64'],
    ['', 'v1', 'Node', '.status.capacity', 'v1.ResourceList'],
    ['', 'v1', 'Pod', '.spec.containers[].ports[]', 'v1.ContainerPort'],
  ])('%s/%s %s%s is %s', (group, version, kind, path, type) => {
    expect(goTypes(schemaFor(group, version, kind) as Schema).get(path)).toBe(type);
  });
});
