/**
 * OpenAPI v3 as kube-apiserver publishes it: an index of group-version documents addressed with a
 * content hash (kubectl caches documents by that hash), and one document per served group-version.
 * Also the schema lookups the server uses for strict field validation.
 */
import { createHash } from 'node:crypto';
import { GROUPS, findGroupVersion, type GroupVersionResources } from '../../api/groups.js';
import { KUBE_GIT_VERSION } from '../../api/kube-level.js';
import { type GVK, META } from './builder.js';
import { pathsFor } from './paths.js';
import { ALL_SCHEMAS, reachable, schemaNameFor } from './schemas.js';

export { schemaFor } from './schema-for.js';

export interface OpenApiDocument {
  body: string;
  /** Upper-case hex SHA-512 of body, the `hash` query value of its URL. */
  hash: string;
}

function gvPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

function kindsOf(gv: GroupVersionResources): GVK[] {
  return gv.resources.flatMap((r) => [
    { group: r.group, version: r.version, kind: r.kind },
    ...(r.verbs.includes('list') ? [{ group: r.group, version: r.version, kind: r.listKind }] : []),
    ...(r.subresources ?? []).map((s) => ({ group: s.group, version: s.version, kind: s.kind })),
  ]);
}

function build(gv: GroupVersionResources): OpenApiDocument {
  const roots = kindsOf(gv)
    .map(schemaNameFor)
    .filter((n): n is string => n !== undefined);
  const names = [...reachable([...roots, `${META}Status`, `${META}DeleteOptions`, `${META}Patch`, `${META}WatchEvent`])].sort();
  const doc = {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: KUBE_GIT_VERSION },
    paths: pathsFor(gv),
    components: { schemas: Object.fromEntries(names.map((n) => [n, ALL_SCHEMAS[n]])) },
  };
  const body = JSON.stringify(doc);
  return { body, hash: createHash('sha512').update(body).digest('hex').toUpperCase() };
}

const DOCS = new Map<string, OpenApiDocument>();

/** The document of a served group-version, built once; undefined for anything else. */
export function openApiV3Document(group: string, version: string): OpenApiDocument | undefined {
  const key = gvPath(group, version);
  const cached = DOCS.get(key);
  if (cached) return cached;
  const gv = findGroupVersion(group, version);
  if (!gv) return undefined;
  const doc = build(gv);
  DOCS.set(key, doc);
  return doc;
}

/** `GET /openapi/v3`: every served group-version with its hashed URL. */
export function openApiV3Index(): { paths: Record<string, { serverRelativeURL: string }> } {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const g of GROUPS) {
    for (const v of g.versions) {
      const p = gvPath(g.name, v.version);
      const doc = openApiV3Document(g.name, v.version);
      if (doc) paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${doc.hash}` };
    }
  }
  return { paths };
}
