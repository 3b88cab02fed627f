/**
 * metav1.LabelSelector objects (`matchLabels`, `matchExpressions`), as aggregation rules and
 * other selector fields carry them; matched with the same requirements the text form parses to.
 */
import { isRecord } from '../../lib/json.js';
import { type LabelOperator, requirementMatches, type LabelRequirement } from './labels.js';

const OPERATORS: Record<string, LabelOperator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/**
 * LabelSelectorAsSelector: an empty selector matches everything; an unknown operator matches
 * nothing (validation refuses it on write, so only a damaged object can carry one).
 */
export function labelSelectorMatches(selector: unknown, labels: Record<string, string> | undefined): boolean {
  if (!isRecord(selector)) return false;
  const requirements: LabelRequirement[] = [];
  if (isRecord(selector.matchLabels)) {
    for (const [key, value] of Object.entries(selector.matchLabels)) requirements.push({ key, operator: '=', values: [String(value)] });
  }
  for (const expr of Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) {
    const operator = isRecord(expr) ? OPERATORS[String(expr.operator)] : undefined;
    if (!isRecord(expr) || operator === undefined) return false;
    const values = Array.isArray(expr.values) ? expr.values.map(String) : [];
    requirements.push({ key: String(expr.key), operator, values });
  }
  return requirements.every((r) => requirementMatches(r, labels ?? {}));
}
