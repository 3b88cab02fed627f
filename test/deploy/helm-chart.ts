/**
 * Renders a Helm chart directory the way `helm template` does: values.yaml deep-merged with overrides
 * and validated against values.schema.json here, the templates by Go's text/template with sprig and
 * Helm's functions (hack/render-chart, through go-renderer.ts), the output split into YAML documents.
 */
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse, parseAllDocuments } from 'yaml';
import { renderWithGo } from './go-renderer.js';

type Value = unknown;
type Obj = Record<string, Value>;

export interface RenderOptions {
  values?: Obj;
  releaseName?: string;
  namespace?: string;
  /** API group/versions (and group/version/Kind) the target cluster serves. */
  apiVersions?: string[];
}

export interface RenderedDoc {
  file: string;
  doc: Obj;
}

export interface RenderedChart {
  values: Obj;
  /** Rendered text per template file (NOTES.txt included). */
  files: Map<string, string>;
  /** Every non-empty YAML document, NOTES.txt excluded. */
  docs: RenderedDoc[];
}

const isObj = (v: Value): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Helm's coalescing: overrides win, maps merge recursively, null removes a default. */
export function mergeValues(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === null) delete out[k];
    else out[k] = isObj(v) && isObj(out[k]) ? mergeValues(out[k] as Obj, v) : v;
  }
  return out;
}

export function loadValues(chartDir: string, overrides: Obj = {}): Obj {
  const defaults = (parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) ?? {}) as Obj;
  const values = mergeValues(defaults, overrides);
  const schemaPath = join(chartDir, 'values.schema.json');
  if (existsSync(schemaPath)) {
    const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(JSON.parse(readFileSync(schemaPath, 'utf8')) as object);
    if (!validate(values)) throw new Error(`values don't meet the specifications of the schema: ${JSON.stringify(validate.errors)}`);
  }
  return values;
}

export function renderChart(chartDir: string, opts: RenderOptions = {}): RenderedChart {
  const values = loadValues(chartDir, opts.values);
  const files = renderWithGo(chartDir, values, opts);
  const docs: RenderedDoc[] = [];
  for (const [f, text] of files) {
    if (f === 'NOTES.txt') continue;
    for (const d of parseAllDocuments(text)) {
      if (d.errors.length > 0) throw new Error(`${f}: rendered YAML does not parse: ${d.errors[0]?.message}\n${text}`);
      const doc = d.toJS() as Value;
      if (doc === null || doc === undefined) continue;
      if (!isObj(doc)) throw new Error(`${f}: a rendered document is not a mapping`);
      docs.push({ file: f, doc });
    }
  }
  return { values, files, docs };
}
