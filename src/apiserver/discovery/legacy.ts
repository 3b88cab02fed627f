/**
 * Legacy discovery documents (APIVersions, APIGroupList, APIGroup, APIResourceList): what clients get
 * when they do not ask for the aggregated form, and what they fetch per group-version as a fallback.
 */
import type { ResourceInfo } from '../../api/resources.js';
import { GROUPS, type GroupEntry, type GroupVersionResources, groupVersionString, sortedVerbs } from '../../api/groups.js';

export interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
}

function groupDoc(g: GroupEntry): Record<string, unknown> {
  const versions = g.versions.map((v) => ({ groupVersion: groupVersionString(g.name, v.version), version: v.version }));
  return { name: g.name, versions, preferredVersion: versions[0] };
}

/** `GET /api`: the core versions. There is no apiVersion field upstream. */
export function apiVersions(host?: string): Record<string, unknown> {
  const core = GROUPS.find((g) => g.name === '');
  const doc: Record<string, unknown> = { kind: 'APIVersions', versions: core ? core.versions.map((v) => v.version) : [] };
  if (host) doc.serverAddressByClientCIDRs = [{ clientCIDR: '0.0.0.0/0', serverAddress: host }];
  return doc;
}

/** `GET /apis`: every named group. */
export function apiGroupList(): Record<string, unknown> {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: GROUPS.filter((g) => g.name !== '').map(groupDoc) };
}

/** `GET /apis/<group>`. */
export function apiGroup(g: GroupEntry): Record<string, unknown> {
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(g) };
}

function resourceEntries(r: ResourceInfo): APIResource[] {
  const main: APIResource = {
    name: r.plural,
    singularName: r.singular,
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: sortedVerbs(r.verbs),
  };
  if (r.shortNames?.length) main.shortNames = [...r.shortNames];
  if (r.categories?.length) main.categories = [...r.categories];
  const subs = (r.subresources ?? []).map((s): APIResource => {
    const e: APIResource = { name: `${r.plural}/${s.name}`, singularName: '', namespaced: r.namespaced, kind: s.kind, verbs: sortedVerbs(s.verbs) };
    // group and version appear only when they differ from the containing group-version.
    if (s.group !== r.group || s.version !== r.version) Object.assign(e, { group: s.group, version: s.version });
    return e;
  });
  return [main, ...subs];
}

/** `GET /api/v1` (no apiVersion, as upstream) or `GET /apis/<group>/<version>`. */
export function apiResourceList(gv: GroupVersionResources): Record<string, unknown> {
  const head: Record<string, unknown> = { kind: 'APIResourceList' };
  if (gv.group !== '') head.apiVersion = 'v1';
  head.groupVersion = groupVersionString(gv.group, gv.version);
  head.resources = gv.resources.flatMap(resourceEntries);
  return head;
}
