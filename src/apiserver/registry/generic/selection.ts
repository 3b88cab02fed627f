/** Label and field selection of objects, shared by list, watch and deletecollection. */
import type { KObject } from '../../../api/meta.js';
import { objectFields, parseFieldSelector } from '../../selectors/fields.js';
import { parseLabelSelector } from '../../selectors/labels.js';
import { selectableFields } from '../../selectors/selectable-fields.js';
import type { Strategy } from './strategy.js';

export interface Selection {
  /** No selector was given: every object matches (and remainingItemCount may be reported). */
  empty: boolean;
  matches(obj: KObject | undefined): boolean;
  /** The value an `f=v` field term requires, if any: what a watch can be indexed by. */
  exact(field: string): string | undefined;
}

/** A kind's selectable fields: the built-in table plus any a strategy declares. */
function fieldsOf(strategy: Strategy): { extra: Record<string, (o: KObject) => string | undefined>; allowed: string[]; style: 'custom' | 'generic' } {
  const known = selectableFields(strategy.info.group, strategy.info.kind);
  const own = strategy.fieldSelectors ?? {};
  const allowed = [...new Set([...known.allowed, ...Object.keys(own)])];
  return { extra: { ...known.extra, ...own }, allowed, style: known.unknownFieldStyle };
}

export function buildSelection(strategy: Strategy, labelSelector = '', fieldSelector = ''): Selection {
  const labels = labelSelector.trim() === '' ? undefined : parseLabelSelector(labelSelector);
  const known = fieldsOf(strategy);
  const fields = fieldSelector.trim() === '' ? undefined : parseFieldSelector(fieldSelector, known.allowed, { unknownFieldStyle: known.style });
  const empty = (labels === undefined || labels.empty) && (fields === undefined || fields.empty);
  return {
    empty,
    matches(obj) {
      if (!obj) return false;
      if (labels && !labels.matches(obj.metadata?.labels ?? {})) return false;
      return !fields || fields.matches(objectFields(obj, known.extra, strategy.info.namespaced));
    },
    exact: (field) => fields?.requiresExactMatch(field),
  };
}
