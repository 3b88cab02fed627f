/**
 * --audit-policy-file: an audit.k8s.io/v1 Policy, decoded and validated as kube-apiserver does
 * (unknown fields ignored, each rule checked, at least one rule), and the checker that gives a
 * request its level: the first rule that matches wins; none matching means None.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { UserInfo } from '../../api/meta.js';
import { type FieldError, fieldErrorString, invalid, notSupported, required } from '../http/field-errors.js';
import { isDns1123Subdomain } from '../validation/names.js';
import { AUDIT_API_VERSION, LEVELS, STAGES, type GroupResources, type Level, type Policy, type PolicyRule, type Stage } from './types.js';

/** A policy file kube-apiserver would refuse; the server refuses to start with this message. */
export class PolicyError extends Error {}

/** What a rule is matched against: authorizer attributes of the authenticated (not impersonated) user. */
export interface AuditAttributes {
  user?: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  path: string;
  apiGroup: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export interface RequestAuditConfig {
  level: Level;
  omitStages: readonly Stage[];
  omitManagedFields: boolean;
}

/** Reads and validates a policy file; every problem is in the PolicyError's message. */
export function loadPolicyFile(file: string): Policy {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new PolicyError(`failed to read audit policy file ${JSON.stringify(file)}: ${(err as Error).message}`);
  }
  try {
    return parsePolicy(text);
  } catch (err) {
    throw new PolicyError(`${(err as Error).message}: from file ${file}`);
  }
}

export function parsePolicy(text: string): Policy {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new PolicyError(`failed decoding: ${(err as Error).message}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new PolicyError('failed decoding: not an object');
  const raw = doc as Record<string, unknown>;
  if (raw.apiVersion !== AUDIT_API_VERSION || raw.kind !== 'Policy') {
    throw new PolicyError(`unknown group version field ${String(raw.apiVersion ?? '')}, Kind=${String(raw.kind ?? '')} in policy (want ${AUDIT_API_VERSION}, Kind=Policy)`);
  }
  const problems: FieldError[] = [];
  const rules = decodeList(raw.rules, 'rules', problems).map((r, i) => decodeRule(r, `rules[${i}]`, problems));
  const policy: Policy = { apiVersion: AUDIT_API_VERSION, kind: 'Policy', rules };
  const omitStages = stages(raw.omitStages, 'omitStages', problems);
  if (omitStages) policy.omitStages = omitStages;
  if (raw.omitManagedFields !== undefined) policy.omitManagedFields = bool(raw.omitManagedFields, 'omitManagedFields', problems);
  if (problems.length > 0) {
    const msgs = problems.map(fieldErrorString);
    throw new PolicyError(msgs.length === 1 ? (msgs[0] ?? '') : `[${msgs.join(', ')}]`);
  }
  if (rules.length === 0) throw new PolicyError('loaded illegal policy with 0 rules');
  return policy;
}

function decodeList(value: unknown, field: string, problems: FieldError[]): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.push(invalid(field, value, 'must be a list'));
    return [];
  }
  return value;
}

function strings(value: unknown, field: string, problems: FieldError[]): string[] | undefined {
  const list = decodeList(value, field, problems);
  if (list.some((v) => typeof v !== 'string')) {
    problems.push(invalid(field, value, 'must be a list of strings'));
    return undefined;
  }
  return list.length > 0 ? (list as string[]) : undefined;
}

function bool(value: unknown, field: string, problems: FieldError[]): boolean {
  if (typeof value !== 'boolean') problems.push(invalid(field, value, 'must be true or false'));
  return value === true;
}

function stages(value: unknown, field: string, problems: FieldError[]): Stage[] | undefined {
  const list = strings(value, field, problems);
  list?.forEach((s, i) => {
    if (!(STAGES as readonly string[]).includes(s)) problems.push(invalid(`${field}[${i}]`, s, `allowed stages are ${STAGES.join(',')}`));
  });
  return list as Stage[] | undefined;
}

function decodeRule(value: unknown, path: string, problems: FieldError[]): PolicyRule {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    problems.push(invalid(path, value, 'must be an object'));
    return { level: 'None' };
  }
  const r = value as Record<string, unknown>;
  const rule: PolicyRule = { level: decodeLevel(r.level, `${path}.level`, problems) };
  for (const key of ['users', 'userGroups', 'verbs', 'namespaces', 'nonResourceURLs'] as const) {
    const list = strings(r[key], `${path}.${key}`, problems);
    if (list) rule[key] = list;
  }
  rule.nonResourceURLs?.forEach((url, i) => checkNonResourceUrl(url, `${path}.nonResourceURLs[${i}]`, problems));
  const resources = decodeList(r.resources, `${path}.resources`, problems).map((g, i) => decodeGroupResources(g, `${path}.resources[${i}]`, problems));
  if (resources.length > 0) rule.resources = resources;
  if (rule.nonResourceURLs && (rule.resources || rule.namespaces)) {
    problems.push(invalid(`${path}.nonResourceURLs`, rule.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
  }
  const omit = stages(r.omitStages, `${path}.omitStages`, problems);
  if (omit) rule.omitStages = omit;
  if (r.omitManagedFields !== undefined && r.omitManagedFields !== null) rule.omitManagedFields = bool(r.omitManagedFields, `${path}.omitManagedFields`, problems);
  return rule;
}

function decodeLevel(level: unknown, field: string, problems: FieldError[]): Level {
  if (level === undefined || level === null || level === '') problems.push(required(field));
  else if (!(LEVELS as readonly unknown[]).includes(level)) problems.push(notSupported(field, level, LEVELS));
  return level as Level;
}

function checkNonResourceUrl(url: string, field: string, problems: FieldError[]): void {
  if (url === '*') return;
  if (!url.startsWith('/')) problems.push(invalid(field, url, "non-resource URL rules must begin with a '/' character"));
  if (url.slice(0, -1).includes('*')) problems.push(invalid(field, url, "non-resource URL wildcards '*' must be the final character of the rule"));
}

function decodeGroupResources(value: unknown, path: string, problems: FieldError[]): GroupResources {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    problems.push(invalid(path, value, 'must be an object'));
    return {};
  }
  const g = value as Record<string, unknown>;
  const out: GroupResources = {};
  if (g.group !== undefined && g.group !== null) {
    if (typeof g.group !== 'string') problems.push(invalid(`${path}.group`, g.group, 'must be a string'));
    else if (g.group !== '') {
      // Upstream reports the group's path without the index; a version in it (rbac.authorization.k8s.io/v1) is the usual mistake.
      const msgs = isDns1123Subdomain(g.group);
      if (msgs.length > 0) problems.push(invalid(path.replace(/\[\d+\]$/, '.group'), g.group, msgs.join(',')));
      out.group = g.group;
    }
  }
  const resources = strings(g.resources, `${path}.resources`, problems);
  if (resources) out.resources = resources;
  const names = strings(g.resourceNames, `${path}.resourceNames`, problems);
  if (names) out.resourceNames = names;
  if (names && !resources) problems.push(invalid(path.replace(/\[\d+\]$/, '.resourceNames'), names, 'using resourceNames requires at least one resource'));
  return out;
}

/** A rule with its lists as sets and its omitted stages already joined with the policy's. */
interface CompiledRule {
  rule: PolicyRule;
  config: RequestAuditConfig;
}

export class PolicyChecker {
  private readonly rules: CompiledRule[];
  private readonly fallback: RequestAuditConfig;

  constructor(policy: Policy) {
    const global = policy.omitStages ?? [];
    const managed = policy.omitManagedFields ?? false;
    this.rules = policy.rules.map((rule) => ({
      rule,
      config: {
        level: rule.level,
        omitStages: [...new Set([...global, ...(rule.omitStages ?? [])])],
        omitManagedFields: rule.omitManagedFields ?? managed,
      },
    }));
    this.fallback = { level: 'None', omitStages: global, omitManagedFields: managed };
  }

  evaluate(attrs: AuditAttributes): RequestAuditConfig {
    for (const { rule, config } of this.rules) if (ruleMatches(rule, attrs)) return config;
    return this.fallback;
  }
}

function ruleMatches(r: PolicyRule, a: AuditAttributes): boolean {
  if (r.users && (!a.user || !r.users.includes(a.user.username))) return false;
  if (r.userGroups && (!a.user || !a.user.groups.some((g) => r.userGroups?.includes(g)))) return false;
  if (r.verbs && !r.verbs.includes(a.verb)) return false;
  if (r.namespaces || r.resources) return matchesResource(r, a);
  if (r.nonResourceURLs) return !a.isResourceRequest && r.nonResourceURLs.some((spec) => pathMatches(a.path, spec));
  return true;
}

function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''));
}

function matchesResource(r: PolicyRule, a: AuditAttributes): boolean {
  if (!a.isResourceRequest) return false;
  // Cluster-scoped resources have the empty namespace, which a rule can list.
  if (r.namespaces && !r.namespaces.includes(a.namespace ?? '')) return false;
  if (!r.resources) return true;
  return r.resources.some((gr) => groupResourcesMatch(gr, a));
}

function groupResourcesMatch(gr: GroupResources, a: AuditAttributes): boolean {
  if ((gr.group ?? '') !== a.apiGroup) return false;
  if (!gr.resources) return true;
  if (gr.resourceNames && !gr.resourceNames.includes(a.name ?? '')) return false;
  const sub = a.subresource ?? '';
  const combined = sub ? `${a.resource}/${sub}` : a.resource;
  // `*` is every resource and subresource, `*/scale` a subresource of any, `pods/*` every subresource of one.
  return gr.resources.some(
    (res) => res === '*' || res === combined || (sub !== '' && res.startsWith('*/') && res.slice(2) === sub) || (res.endsWith('/*') && res.slice(0, -2) === a.resource),
  );
}
