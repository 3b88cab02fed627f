/**
 * Helpers shared by the deploy checks: read the kustomize base's resources without kubectl, and reduce
 * RBAC objects to a canonical form so the chart and deploy/ can be compared rule for rule.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

export type Obj = Record<string, unknown>;

export const REPO = process.cwd();
export const DEPLOY_DIR = join(REPO, 'deploy');
export const CHART_DIR = join(REPO, 'charts', 'kube-identity');

export function parseDocs(text: string, where: string): Obj[] {
  return parseAllDocuments(text).flatMap((d) => {
    if (d.errors.length > 0) throw new Error(`${where}: ${d.errors[0]?.message}`);
    const js = d.toJS() as unknown;
    return js === null || js === undefined ? [] : [js as Obj];
  });
}

/** The objects listed in a kustomization's `resources` (files only), as written, before kustomize. */
export function readKustomizeResources(kustomization: string): Obj[] {
  const k = parse(readFileSync(kustomization, 'utf8')) as { resources: string[] };
  return k.resources.flatMap((r) => {
    const file = join(dirname(kustomization), r);
    return parseDocs(readFileSync(file, 'utf8'), file);
  });
}

const RBAC_KINDS = new Set(['ClusterRole', 'Role', 'ClusterRoleBinding', 'RoleBinding']);

const sorted = (v: unknown): string[] => (Array.isArray(v) ? v.map(String).sort() : []);

function normaliseRule(rule: Obj): string {
  return JSON.stringify({
    apiGroups: sorted(rule.apiGroups),
    resources: sorted(rule.resources),
    resourceNames: sorted(rule.resourceNames),
    verbs: sorted(rule.verbs),
    nonResourceURLs: sorted(rule.nonResourceURLs),
  });
}

/**
 * RBAC objects keyed by `Kind namespace/name`: roles map to their sorted, normalised rules, bindings
 * to roleRef plus sorted subjects. Labels and comments are ignored; everything that grants is kept.
 */
export function normaliseRbac(docs: Obj[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const doc of docs) {
    const kind = String(doc.kind);
    if (!RBAC_KINDS.has(kind)) continue;
    const meta = doc.metadata as Obj;
    const key = `${kind} ${meta.namespace === undefined ? '' : `${String(meta.namespace)}/`}${String(meta.name)}`;
    if (out.has(key)) throw new Error(`duplicate ${key}`);
    if (kind.endsWith('Binding')) {
      const subjects = ((doc.subjects ?? []) as Obj[]).map((s) => JSON.stringify({ kind: s.kind, name: s.name, namespace: s.namespace })).sort();
      out.set(key, { roleRef: doc.roleRef, subjects });
    } else {
      out.set(key, ((doc.rules ?? []) as Obj[]).map(normaliseRule).sort());
    }
  }
  return out;
}

/** The rules of one role, found by kind and name suffix (`:signer`), parsed back to objects. */
export function rulesOf(rbac: Map<string, unknown>, kind: string, suffix: string): Obj[] {
  const hits = [...rbac.entries()].filter(([k]) => k.startsWith(`${kind} `) && k.endsWith(suffix));
  if (hits.length !== 1) throw new Error(`expected one ${kind} *${suffix}, found ${hits.length}`);
  return (hits[0]?.[1] as string[]).map((r) => JSON.parse(r) as Obj);
}

export function findDoc(docs: Obj[], kind: string, name?: string): Obj {
  const doc = docs.find((d) => d.kind === kind && (name === undefined || (d.metadata as Obj).name === name));
  if (!doc) throw new Error(`no ${kind}${name ? ` ${name}` : ''} in ${docs.map((d) => `${String(d.kind)}/${String((d.metadata as Obj).name)}`).join(', ')}`);
  return doc;
}

/** Containers of a Deployment's pod template. */
export function podSpec(deployment: Obj): Obj {
  return ((deployment.spec as Obj).template as Obj).spec as Obj;
}

export function controllerContainer(deployment: Obj): Obj {
  const c = (podSpec(deployment).containers as Obj[]).find((x) => x.name === 'controller');
  if (!c) throw new Error('no controller container');
  return c;
}
