/**
 * The RESOURCES table regrouped the way discovery presents it: group → versions → resources, groups in
 * kube-apiserver's priority order (core first), versions in the table's order (the preferred first),
 * resources sorted by name as upstream lists them.
 */
import { RESOURCES, type ResourceInfo } from './resources.js';

export interface GroupVersionResources {
  group: string;
  version: string;
  resources: ResourceInfo[];
}

export interface GroupEntry {
  name: string;
  /** Preference order: the first version is the preferred one. */
  versions: GroupVersionResources[];
}

/**
 * kube-apiserver's group priorities (its aggregator's APIService groupPriorityMinimum): discovery
 * lists groups from the highest down, which is also the order clients try a name two groups share.
 */
const GROUP_PRIORITY: Readonly<Record<string, number>> = {
  '': 18000,
  apps: 17800,
  'events.k8s.io': 17750,
  'authentication.k8s.io': 17700,
  'authorization.k8s.io': 17600,
  'certificates.k8s.io': 17300,
  'rbac.authorization.k8s.io': 17000,
  'coordination.k8s.io': 16500,
};

function priorityOf(group: string): number {
  const p = GROUP_PRIORITY[group];
  if (p === undefined) throw new Error(`no discovery priority for group ${JSON.stringify(group)}`);
  return p;
}

function build(): GroupEntry[] {
  const groups: GroupEntry[] = [];
  for (const r of RESOURCES) {
    let g = groups.find((x) => x.name === r.group);
    if (!g) {
      g = { name: r.group, versions: [] };
      groups.push(g);
    }
    let v = g.versions.find((x) => x.version === r.version);
    if (!v) {
      v = { group: r.group, version: r.version, resources: [] };
      g.versions.push(v);
    }
    v.resources.push(r);
  }
  for (const g of groups) for (const v of g.versions) v.resources.sort((a, b) => a.plural.localeCompare(b.plural));
  return groups.sort((a, b) => priorityOf(b.name) - priorityOf(a.name));
}

/** Every served group, the core group ("") included. */
export const GROUPS: readonly GroupEntry[] = build();

export function findGroup(name: string): GroupEntry | undefined {
  return GROUPS.find((g) => g.name === name);
}

export function findGroupVersion(group: string, version: string): GroupVersionResources | undefined {
  return findGroup(group)?.versions.find((v) => v.version === version);
}

export function groupVersionString(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

export function sortedVerbs(verbs: readonly string[]): string[] {
  return [...verbs].sort();
}
