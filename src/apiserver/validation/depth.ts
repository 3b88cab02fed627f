/**
 * The nesting cap every decoded body and patch result passes before any recursive code (field
 * managers, strategic merge, unknown-field walks, defaulting, deep copies) sees it. Go's decoders
 * stop at 10000 levels; JavaScript's call stack does not reach that in every recursive walk the
 * server runs, so the cap is lower, with the same error texts (see docs/upstream-differences.md).
 * 500 leaves the YAML parser (which recurses and gave up near 800 levels under test) a margin;
 * real objects nest a few dozen levels at most.
 */
import { parse as parseYaml } from 'yaml';

export const MAX_NESTING_DEPTH = 500;

/**
 * The opening bracket of the first container nested deeper than `limit` (root = level 1), or
 * undefined when none is. Iterative: safe on input of any depth.
 */
export function tooDeepAt(root: unknown, limit = MAX_NESTING_DEPTH): '{' | '[' | undefined {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    if (depth > limit) return Array.isArray(v) ? '[' : '{';
    for (const item of Array.isArray(v) ? v : Object.values(v)) {
      if (item !== null && typeof item === 'object') stack.push([item, depth + 1]);
    }
  }
  return undefined;
}

/** Go encoding/json's text for input nested past the cap. */
export function depthSyntaxError(bracket: '{' | '['): string {
  return `invalid character '${bracket}' exceeded max depth`;
}

/** go-yaml's text for YAML nested past the cap (sigs.k8s.io/yaml decodes YAML bodies with it). */
export const YAML_DEPTH_ERROR = `yaml: exceeded max depth of ${MAX_NESTING_DEPTH}`;

/**
 * YAML.parse with the cap: input nested past it (or so deep the parser's own recursion gives up)
 * throws go-yaml's text; callers wrap it as they wrap any YAML error.
 */
export function parseYamlCapped(text: string): unknown {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    // The parser reports its own stack overflow as a parse error at the offending line.
    if (e instanceof RangeError || (e as Error).message.startsWith('Maximum call stack size exceeded')) throw new Error(YAML_DEPTH_ERROR, { cause: e });
    throw e;
  }
  if (tooDeepAt(doc) !== undefined) throw new Error(YAML_DEPTH_ERROR);
  return doc;
}
