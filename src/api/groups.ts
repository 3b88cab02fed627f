/**
 * The RESOURCES table regrouped the way discovery presents it: group → versions → resources, in the
 * order groups first appear in the table (core first), resources sorted by name as upstream lists them.
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
  return groups;
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
