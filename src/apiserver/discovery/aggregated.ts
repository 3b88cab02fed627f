/**
 * Aggregated discovery (apidiscovery.k8s.io v2; v2beta1 is gone since 1.33): one document for `/api` and one for
 * `/apis` that carries every resource, so kubectl needs no per-group-version round trips. Every
 * resource and subresource carries a non-empty responseKind, or client-go silently drops it.
 */
import type { ResourceInfo } from '../../api/resources.js';
import { GROUPS, type GroupEntry, sortedVerbs } from '../../api/groups.js';

export type AggregatedVersion = 'v2';

interface GVK {
  group: string;
  version: string;
  kind: string;
}

/** Upstream leaves group and version empty when they equal the containing group-version. */
function responseKind(containing: { group: string; version: string }, target: GVK): GVK {
  const same = containing.group === target.group && containing.version === target.version;
  return same
    ? { group: '', version: '', kind: target.kind }
    : { group: target.group, version: target.version, kind: target.kind };
}

function resourceDoc(r: ResourceInfo): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    resource: r.plural,
    responseKind: responseKind(r, r),
    scope: r.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: r.singular,
    verbs: sortedVerbs(r.verbs),
  };
  if (r.shortNames?.length) doc.shortNames = [...r.shortNames];
  if (r.categories?.length) doc.categories = [...r.categories];
  if (r.subresources?.length) {
    doc.subresources = r.subresources.map((s) => ({
      subresource: s.name,
      responseKind: responseKind(r, s),
      verbs: sortedVerbs(s.verbs),
    }));
  }
  return doc;
}

function groupDoc(g: GroupEntry): Record<string, unknown> {
  const metadata: Record<string, unknown> = g.name === '' ? { creationTimestamp: null } : { name: g.name, creationTimestamp: null };
  return {
    metadata,
    versions: g.versions.map((v) => ({ version: v.version, resources: v.resources.map(resourceDoc), freshness: 'Current' })),
  };
}

/** The APIGroupDiscoveryList for `/api` (core only) or `/apis` (named groups). */
export function aggregatedList(root: 'api' | 'apis', version: AggregatedVersion): Record<string, unknown> {
  const groups = GROUPS.filter((g) => (root === 'api' ? g.name === '' : g.name !== ''));
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items: groups.map(groupDoc),
  };
}

/** The exact Content-Type client-go recognises; upstream appends g, v and as in this order. */
export function aggregatedContentType(version: AggregatedVersion): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}
