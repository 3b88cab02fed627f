/**
 * Access and identity reviews (authorization.k8s.io/v1 SubjectAccessReview, SelfSubjectAccessReview,
 * LocalSubjectAccessReview, SelfSubjectRulesReview; authentication.k8s.io/v1 SelfSubjectReview): virtual resources that
 * ask the request's Authorizer, or echo the caller's identity. A denied review is a 201 answer.
 */
import type { SelfSubjectRulesReview, SubjectAccessReview, SubjectAccessReviewSpec } from '../../../api/authorization.js';
import type { KObject, UserInfo } from '../../../api/meta.js';
import { findResource, type ResourceInfo } from '../../../api/resources.js';
import { errors } from '../../http/errors.js';
import { type FieldError, invalid } from '../../http/field-errors.js';
import { timestampSeconds } from '../../../lib/rfc3339.js';
import type { RequestContext, Strategy, VirtualCreate } from '../generic/strategy.js';
import type { AuthorizationAttributes } from '../../authorization/authorizer.js';
import type { PolicyRule } from '../../../api/rbac.js';

const AUTHZ = 'authorization.k8s.io';

function resourceInfo(group: string, plural: string): ResourceInfo {
  const r = findResource(group, 'v1', plural);
  if (!r) throw new Error(`resource ${plural} missing from RESOURCES`);
  return r;
}

type ResourceAttributes = NonNullable<SubjectAccessReviewSpec['resourceAttributes']>;

function attributesErrors(spec: SubjectAccessReviewSpec, local: boolean): FieldError[] {
  const hasRes = spec.resourceAttributes !== undefined && spec.resourceAttributes !== null;
  const hasNonRes = spec.nonResourceAttributes !== undefined && spec.nonResourceAttributes !== null;
  if (local && hasNonRes) return [invalid('spec.nonResourceAttributes', spec.nonResourceAttributes, 'disallowed on this kind of request')];
  if (hasRes && hasNonRes) {
    return [invalid('spec.nonResourceAttributes', spec.nonResourceAttributes, 'cannot be specified in combination with resourceAttributes')];
  }
  if (!hasRes && !hasNonRes) {
    return [invalid('spec.resourceAttributes', null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified')];
  }
  return [];
}

/** Each selector of resourceAttributes gives either its raw form or its parsed requirements, never both. */
function selectorErrors(spec: SubjectAccessReviewSpec): FieldError[] {
  const r = spec.resourceAttributes;
  if (!r) return [];
  return (['fieldSelector', 'labelSelector'] as const).flatMap((which) => {
    const sel = r[which] ?? {};
    const rawSelector = sel.rawSelector ?? '';
    const both = rawSelector !== '' && (sel.requirements ?? []).length > 0;
    return both ? [invalid(`spec.resourceAttributes.${which}.rawSelector`, rawSelector, 'may not specified at the same time as requirements')] : [];
  });
}

/**
 * The review's field selector as the authorizer sees a list's `fieldSelector` (AuthorizeWithSelectors,
 * GA in 1.34): the raw form as given, or the requirements a field selector can express (In or NotIn one
 * value). Requirements it cannot express only limit the request, so the review asks without them, as upstream.
 */
function reviewFieldSelector(r: ResourceAttributes): string | undefined {
  const sel = r.fieldSelector ?? {};
  const rawSelector = sel.rawSelector ?? '';
  if (rawSelector !== '') return rawSelector;
  const terms = (sel.requirements ?? []).map((req) => {
    const values = req.values ?? [];
    if (values.length !== 1) return undefined;
    if (req.operator === 'In') return `${req.key ?? ''}=${values[0]}`;
    return req.operator === 'NotIn' ? `${req.key ?? ''}!=${values[0]}` : undefined;
  });
  if (terms.length === 0 || terms.includes(undefined)) return undefined;
  return terms.join(',');
}

function subjectErrors(spec: SubjectAccessReviewSpec): FieldError[] {
  if (!spec.user && (spec.groups ?? []).length === 0) {
    return [invalid('spec.user', spec.user ?? '', 'at least one of user or group must be specified')];
  }
  return [];
}

function attributes(spec: SubjectAccessReviewSpec, user: UserInfo): AuthorizationAttributes {
  const r = spec.resourceAttributes;
  if (r) {
    return {
      user,
      verb: r.verb ?? '',
      apiGroup: r.group ?? '',
      resource: r.resource ?? '',
      subresource: r.subresource || undefined,
      namespace: r.namespace || undefined,
      name: r.name || undefined,
      fieldSelector: reviewFieldSelector(r),
    };
  }
  const n = spec.nonResourceAttributes ?? {};
  return { user, verb: n.verb ?? '', path: n.path ?? '' };
}

async function evaluate(attrs: AuthorizationAttributes, ctx: RequestContext): Promise<Record<string, unknown>> {
  try {
    const d = await ctx.authorizer.authorize(attrs);
    const status: Record<string, unknown> = { allowed: d.allowed };
    if (d.reason) status.reason = d.reason;
    return status;
  } catch (err) {
    return { allowed: false, evaluationError: err instanceof Error ? err.message : String(err) };
  }
}

function extraOf(extra: SubjectAccessReviewSpec['extra']): Record<string, string[]> | undefined {
  const entries = Object.entries(extra ?? {}).map(([k, vals]) => [k, vals ?? []] as const);
  return entries.length ? Object.fromEntries(entries) : undefined;
}

type Kind = 'SubjectAccessReview' | 'SelfSubjectAccessReview' | 'LocalSubjectAccessReview';

function accessReview(kind: Kind): VirtualCreate<SubjectAccessReview> {
  return {
    async create(body, ctx, target) {
      const spec = body.spec ?? {};
      const local = kind === 'LocalSubjectAccessReview';
      const errs = [...attributesErrors(spec, local), ...selectorErrors(spec), ...(kind === 'SelfSubjectAccessReview' ? [] : subjectErrors(spec))];
      if (errs.length) throw errors.invalid(kind, AUTHZ, '', errs);
      if (local) {
        const ns = spec.resourceAttributes?.namespace ?? '';
        if (ns !== (target.namespace ?? '')) {
          throw errors.badRequest(`spec.resourceAttributes.namespace must match namespace: ${target.namespace ?? ''}`);
        }
      }
      const user: UserInfo =
        kind === 'SelfSubjectAccessReview'
          ? ctx.user
          : { username: spec.user ?? '', uid: spec.uid, groups: spec.groups ?? [], extra: extraOf(spec.extra) };
      const out: KObject = {
        kind,
        apiVersion: `${AUTHZ}/v1`,
        metadata: { ...body.metadata, creationTimestamp: null },
        spec: body.spec,
        status: await evaluate(attributes(spec, user), ctx),
      };
      if (local) out.metadata = { ...out.metadata, namespace: target.namespace };
      return out;
    },
  };
}

const selfSubjectReview: VirtualCreate = {
  create(body, ctx) {
    const u = ctx.user;
    const userInfo: Record<string, unknown> = { username: u.username, groups: u.groups };
    if (u.uid) userInfo.uid = u.uid;
    if (u.extra) userInfo.extra = u.extra;
    return Promise.resolve({
      kind: 'SelfSubjectReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { ...body.metadata, creationTimestamp: timestampSeconds(ctx.now) },
      status: { userInfo },
    });
  },
};

/** utilerrors.NewAggregate(...).Error() upstream: one message as is, several in brackets, without repeats. */
function aggregateMessage(messages: string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? (unique[0] as string) : `[${unique.join(', ')}]`;
}

function resourceRule(r: PolicyRule): Record<string, unknown> {
  const out: Record<string, unknown> = { verbs: r.verbs };
  if (r.apiGroups.length) out.apiGroups = r.apiGroups;
  if (r.resources.length) out.resources = r.resources;
  if (r.resourceNames.length) out.resourceNames = r.resourceNames;
  return out;
}

/**
 * SelfSubjectRulesReview: every rule the authorizer chain grants the caller in spec.namespace,
 * split as upstream splits them (a rule with resources is a resource rule, one with URLs a
 * non-resource rule). `incomplete` when an authorizer cannot list what it allows (the Node
 * authorizer for a node); bindings to missing roles are the evaluationError.
 */
const selfSubjectRulesReview: VirtualCreate<SelfSubjectRulesReview> = {
  async create(body, ctx) {
    const namespace = body.spec?.namespace ?? '';
    if (!namespace) throw errors.badRequest('no namespace on request');
    const found = ctx.authorizer.rulesFor
      ? await ctx.authorizer.rulesFor(ctx.user, namespace)
      : { rules: [], incomplete: true, errors: [] };
    const status: Record<string, unknown> = {
      resourceRules: found.rules.filter((r) => r.resources.length > 0).map(resourceRule),
      nonResourceRules: found.rules
        .filter((r) => r.nonResourceURLs.length > 0)
        .map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs })),
      incomplete: found.incomplete,
    };
    if (found.errors.length > 0) status.evaluationError = aggregateMessage(found.errors);
    return {
      kind: 'SelfSubjectRulesReview',
      apiVersion: `${AUTHZ}/v1`,
      metadata: { ...body.metadata, creationTimestamp: null },
      spec: body.spec,
      status,
    };
  },
};

function virtualStrategy(group: string, plural: string, virtual: VirtualCreate): Strategy {
  return { info: resourceInfo(group, plural), allowCreateOnUpdate: false, allowUnconditionalUpdate: true, virtual };
}

/** Strategies for subjectaccessreviews, selfsubjectaccessreviews, localsubjectaccessreviews, selfsubjectrulesreviews, selfsubjectreviews. */
export function reviewStrategies(): Strategy[] {
  return [
    virtualStrategy(AUTHZ, 'subjectaccessreviews', accessReview('SubjectAccessReview')),
    virtualStrategy(AUTHZ, 'selfsubjectaccessreviews', accessReview('SelfSubjectAccessReview')),
    virtualStrategy(AUTHZ, 'localsubjectaccessreviews', accessReview('LocalSubjectAccessReview')),
    virtualStrategy(AUTHZ, 'selfsubjectrulesreviews', selfSubjectRulesReview),
    virtualStrategy('authentication.k8s.io', 'selfsubjectreviews', selfSubjectReview),
  ];
}
