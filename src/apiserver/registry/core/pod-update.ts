/**
 * What an update of a pod may change, as upstream's ValidatePodUpdate: the spec is immutable but for
 * container and init container images, activeDeadlineSeconds (set, or lowered), tolerations (added,
 * or an existing one's tolerationSeconds), scheduling gates (removed), a negative
 * terminationGracePeriodSeconds set to 1, and on a pod still gated its node selector and required
 * node affinity (extended only); the mirror pod annotation can be neither added, changed nor
 * removed. So `spec.nodeName` is set only through pods/binding, and nobody who may update a pod can
 * move it to another node or make it name other Secrets, ConfigMaps or service accounts, which
 * would hand them to the node it runs on (the Node authorizer's graph).
 */
import { MIRROR_POD_ANNOTATION, type Container, type Pod, type PodSpec } from '../../../api/pods.js';
import { forbidden, invalid, required, type FieldError } from '../../http/field-errors.js';
import { isRecord, list, record } from '../../../lib/json.js';
import { isEmptyJson, semanticEqual, type JsonPath } from '../../../lib/json-value.js';
import { POD_MESSAGES } from '../../codec/protobuf-pod.js';
import type { FieldDesc, MessageDesc } from '../../codec/protobuf-schema.js';

/** Upstream's list, in its words (clients match on the message's start). */
const MUTABLE_FIELDS =
  '`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),' +
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';
const MAX_INT32 = 2_147_483_647;
/** Lines of the difference the Forbidden message shows. */
const MAX_DIFF_LINES = 20;

export function validatePodUpdate(pod: Pod, old: Pod): FieldError[] {
  const errs = mirrorAnnotationUpdates(pod, old);
  const spec = pod.spec ?? {};
  const oldSpec = old.spec ?? {};
  for (const field of ['containers', 'initContainers'] as const) {
    const found = containerUpdates(spec[field] ?? [], oldSpec[field] ?? [], `spec.${field}`);
    errs.push(...found);
    if (found.some((e) => e.type === 'FieldValueForbidden')) return errs;
  }
  const deadline = activeDeadlineUpdate(spec.activeDeadlineSeconds, oldSpec.activeDeadlineSeconds);
  if (deadline) {
    errs.push(deadline);
    if (spec.activeDeadlineSeconds !== undefined) return errs;
  }
  errs.push(...onlyAddedTolerations(spec.tolerations ?? [], oldSpec.tolerations ?? []), ...onlyDeletedGates(list(spec.schedulingGates), list(oldSpec.schedulingGates)));
  const munged = withAllowedChangesUndone(spec, oldSpec);
  errs.push(...gatedPlacementUpdates(munged, oldSpec));
  if (!semanticEqual(munged, oldSpec, specZeros)) errs.push(forbidden('spec', `pod updates may not change fields other than ${MUTABLE_FIELDS}\n${difference(oldSpec, munged)}`));
  return errs;
}

/** ValidatePodSpecificAnnotationUpdates: a pod cannot become, or stop being, a mirror pod. */
export function mirrorAnnotationUpdates(pod: Pod, old: Pod): FieldError[] {
  const now = pod.metadata?.annotations ?? {};
  const before = old.metadata?.annotations ?? {};
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(before)) {
    if (k.startsWith(MIRROR_POD_ANNOTATION) && now[k] !== v) errs.push(forbidden(`metadata.annotations[${k}]`, 'may not remove or update mirror pod annotation'));
  }
  for (const k of Object.keys(now)) {
    if (k.startsWith(MIRROR_POD_ANNOTATION) && !(k in before)) errs.push(forbidden(`metadata.annotations[${k}]`, 'may not add mirror pod annotation'));
  }
  return errs;
}

/** ValidateContainerUpdates: the same containers, each with an image. A Forbidden stops the validation. */
function containerUpdates(now: Container[], before: Container[], path: string): FieldError[] {
  if (now.length !== before.length) return [forbidden(path, 'pod updates may not add or remove containers')];
  const errs: FieldError[] = [];
  now.forEach((c, i) => {
    const image = c.image ?? '';
    if (image === '') errs.push(required(`${path}[${i}].image`));
    if (image.trim() !== image) errs.push(invalid(`${path}[${i}].image`, image, 'must not have leading or trailing whitespace'));
  });
  return errs;
}

/** activeDeadlineSeconds may be set, or lowered, never raised or removed. */
function activeDeadlineUpdate(now: number | undefined, before: number | undefined): FieldError | undefined {
  const path = 'spec.activeDeadlineSeconds';
  if (now === undefined) return before === undefined ? undefined : invalid(path, null, 'must not update from a positive integer to nil value');
  if (now < 0 || now > MAX_INT32) return invalid(path, now, `must be between 0 and ${MAX_INT32}, inclusive`);
  return before !== undefined && before < now ? invalid(path, now, 'must be less than or equal to previous value') : undefined;
}

type Toleration = NonNullable<PodSpec['tolerations']>[number];

/** Every existing toleration stays, changed in its tolerationSeconds at most. */
function onlyAddedTolerations(now: Toleration[], before: Toleration[]): FieldError[] {
  const kept = (old: Toleration): boolean => now.some((t) => semanticEqual({ ...old, tolerationSeconds: t.tolerationSeconds }, t, tolerationZeros));
  return before.every(kept) ? [] : [forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds')];
}

/** Scheduling gates can only be removed (the served schema leaves them free-form: names read as they are). */
function onlyDeletedGates(now: unknown[], before: unknown[]): FieldError[] {
  const old = new Set(before.map((g) => record(g).name));
  return now.flatMap((g, i) => {
    const name = record(g).name;
    return old.has(name) ? [] : [forbidden(`spec.schedulingGates[${i}].name`, `only deletion is allowed, but found new scheduling gate '${String(name)}'`)];
  });
}

/** The new spec with every change the update may make set back to the old value: what must equal the old spec. */
function withAllowedChangesUndone(spec: PodSpec, old: PodSpec): PodSpec {
  const images = (now: Container[] | undefined, before: Container[] | undefined): Container[] | undefined =>
    now?.map((c, i) => ({ ...c, image: before?.[i]?.image }));
  const munged: PodSpec = {
    ...spec,
    containers: images(spec.containers, old.containers),
    initContainers: images(spec.initContainers, old.initContainers),
    activeDeadlineSeconds: old.activeDeadlineSeconds,
    tolerations: old.tolerations,
    schedulingGates: old.schedulingGates,
  };
  const grace = old.terminationGracePeriodSeconds;
  if (grace !== undefined && grace < 0 && spec.terminationGracePeriodSeconds === 1) munged.terminationGracePeriodSeconds = grace;
  return munged;
}

const TERMS = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms';

/**
 * A gated pod (the old spec has scheduling gates) may gain node selector labels and node affinity
 * requirements, and lose or change none, so what schedules it once ungated only narrows; `munged`
 * gets the old ones back for the comparison of the rest, as upstream's ValidatePodUpdate does.
 */
function gatedPlacementUpdates(munged: PodSpec, old: PodSpec): FieldError[] {
  if (list(old.schedulingGates).length === 0) return [];
  const errs = gatedNodeSelector(munged, old);
  const oldNode = record(old.affinity).nodeAffinity;
  const nowAffinity = munged.affinity === undefined || munged.affinity === null ? undefined : record(munged.affinity);
  if (semanticEqual(nowAffinity?.nodeAffinity, oldNode, specZeros, ['affinity', 'nodeAffinity'])) return errs;
  errs.push(...nodeAffinityUpdates(nowAffinity?.nodeAffinity, oldNode));
  if (nowAffinity === undefined) munged.affinity = oldNode === undefined ? undefined : { nodeAffinity: oldNode };
  else if (old.affinity === undefined && nowAffinity.podAffinity === undefined && nowAffinity.podAntiAffinity === undefined) munged.affinity = undefined;
  else munged.affinity = { ...nowAffinity, nodeAffinity: oldNode };
  return errs;
}

/** Node selector labels: added only. */
function gatedNodeSelector(munged: PodSpec, old: PodSpec): FieldError[] {
  if (semanticEqual(munged.nodeSelector, old.nodeSelector, specZeros, ['nodeSelector'])) return [];
  const now = munged.nodeSelector ?? {};
  munged.nodeSelector = old.nodeSelector;
  const kept = Object.entries(old.nodeSelector ?? {}).every(([k, v]) => now[k] === v);
  return kept ? [] : [invalid('spec.nodeSelector', now, 'only additions to spec.nodeSelector are allowed (no mutations or deletions)')];
}

/** Required node selector terms, once there are any: the same number, each only extended (its old requirements a prefix of its new). */
function nodeAffinityUpdates(now: unknown, old: unknown): FieldError[] {
  const termsOf = (affinity: unknown): unknown[] => list(record(record(affinity).requiredDuringSchedulingIgnoredDuringExecution).nodeSelectorTerms);
  const before = termsOf(old);
  if (before.length === 0) return [];
  const after = termsOf(now);
  if (after.length !== before.length) return [invalid(TERMS, after, 'no additions/deletions to non-empty NodeSelectorTerms list are allowed')];
  const onlyExtends = (term: unknown, oldTerm: unknown): boolean =>
    ['matchExpressions', 'matchFields'].every((f) => {
      const was = list(record(oldTerm)[f]);
      const is = list(record(term)[f]);
      return is.length >= was.length && semanticEqual(is.slice(0, was.length), was, () => false);
    });
  return before.flatMap((oldTerm, i) => (onlyExtends(after[i], oldTerm) ? [] : [invalid(`${TERMS}[${i}]`, after[i], 'only additions are allowed (no mutations or deletions)')]));
}

/** Go's zero values of non-pointer scalar fields, which JSON omits and Semantic.DeepEqual sees as absent. */
const SCALAR_ZEROS: Readonly<Record<string, unknown>> = { string: '', bool: false, int32: 0, int64: 0 };

/**
 * Zero values of the pod's fields, from the Go types in the protobuf tables (protobuf-pod.ts): at
 * `path` under message `root`, the zero of a non-pointer scalar field (`hostNetwork: false` is the
 * same as no hostNetwork). A field the tables do not know, a pointer's, a map's or a list element's
 * has none but the empty ones every comparison shares (semanticEqual).
 */
const podZeros =
  (root: string) =>
  (v: unknown, path: JsonPath): boolean => {
    let message: MessageDesc | undefined = POD_MESSAGES[root];
    let field: FieldDesc | undefined;
    for (const step of path) {
      if (typeof step === 'number') {
        if (field?.[2] !== 'r') return false;
        field = undefined;
        continue;
      }
      field = message?.[step];
      if (!field) return false;
      message = field[2] === 'm' ? undefined : POD_MESSAGES[field[1]];
    }
    return field !== undefined && field[2] === undefined && field[1] in SCALAR_ZEROS && v === SCALAR_ZEROS[field[1]];
  };
const specZeros = podZeros('PodSpec');
const tolerationZeros = podZeros('Toleration');

/** The fields that differ, `path: old -> new`, for the message (upstream prints a Go diff of the specs). */
function difference(old: unknown, now: unknown): string {
  const lines: string[] = [];
  const show = (v: unknown): string => (isEmptyJson(v) ? '<none>' : JSON.stringify(v));
  const name = (path: JsonPath): string => path.map((step) => (typeof step === 'number' ? `[${step}]` : `.${step}`)).join('');
  const walk = (a: unknown, b: unknown, path: JsonPath): void => {
    if (lines.length >= MAX_DIFF_LINES || semanticEqual(a, b, specZeros, path)) return;
    if (isRecord(a) && isRecord(b)) {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[k], b[k], [...path, k]);
    } else if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      a.forEach((x, i) => walk(x, b[i], [...path, i]));
    } else lines.push(`  spec${name(path)}: ${show(a)} -> ${show(b)}`);
  };
  walk(old, now, []);
  return lines.join('\n');
}
