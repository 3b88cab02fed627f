/**
 * The bridge from client-side to server-side apply, for the `kubectl` manager only (as upstream):
 * fields the last-applied-configuration annotation still describes (same value live) may be taken
 * over without conflicts, and the annotation follows what `kubectl` server-side applied, so a
 * later client-side apply computes its three-way merge from the right base.
 */
import type { KObject } from '../../api/meta.js';
import type { Schema } from '../openapi/builder.js';
import { deepEqual } from '../../lib/json-value.js';
import { FieldSet } from './field-set.js';
import { objectFieldSet } from './managers.js';
import { valueAt } from './typed.js';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
export const KUBECTL_MANAGER = 'kubectl';

function lastApplied(obj: KObject): KObject | undefined {
  const text = obj.metadata?.annotations?.[LAST_APPLIED];
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as KObject) : undefined;
  } catch {
    return undefined;
  }
}

/** Fields the live object's last-applied configuration sets to their live values. */
export function allowedFromLastApplied(live: KObject, schema: Schema | undefined): FieldSet {
  const config = lastApplied(live);
  const allowed = new FieldSet();
  if (!config) return allowed;
  for (const p of objectFieldSet(config, schema).paths()) {
    const was = valueAt(config, p, schema);
    const now = valueAt(live, p, schema);
    if (now.found && deepEqual(was.value, now.value)) allowed.insert(p);
  }
  return allowed;
}

/** Rewrites an existing last-applied annotation to the configuration just applied; mutates obj. */
export function syncLastApplied(obj: KObject, applied: KObject): void {
  const annotations = obj.metadata?.annotations;
  if (!annotations?.[LAST_APPLIED]) return;
  const config = structuredClone(applied);
  const own = config.metadata?.annotations;
  if (own) {
    delete own[LAST_APPLIED];
    if (Object.keys(own).length === 0) delete config.metadata?.annotations;
  }
  annotations[LAST_APPLIED] = JSON.stringify(config);
}
