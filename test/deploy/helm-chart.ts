/**
 * Renders a Helm chart directory the way `helm template` does for the parts our chart uses: values.yaml
 * deep-merged with overrides and validated against values.schema.json, the built-in objects
 * (.Values .Release .Chart .Capabilities .Template), every templates/ file except `_*` partials, and
 * the output split into YAML documents.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse, parseAllDocuments } from 'yaml';
import { Engine, type Value } from './template-exec.js';
import { helmFuncs } from './template-funcs.js';

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

const BUILTIN_API_VERSIONS = ['v1', 'apps/v1', 'policy/v1', 'rbac.authorization.k8s.io/v1', 'coordination.k8s.io/v1', 'certificates.k8s.io/v1'];

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

/** Chart.yaml keys as Helm exposes them on .Chart (Go field names). */
function chartObject(meta: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(meta)) out[k === 'apiVersion' ? 'APIVersion' : k.charAt(0).toUpperCase() + k.slice(1)] = v;
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
  const meta = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as Obj;
  const chartName = String(meta.name);
  const values = loadValues(chartDir, opts.values);
  const apiVersions = new Set([...BUILTIN_API_VERSIONS, ...(opts.apiVersions ?? [])]);
  const engine = new Engine(helmFuncs);
  const dir = join(chartDir, 'templates');
  const names = readdirSync(dir).filter((f) => /\.(ya?ml|tpl|txt)$/.test(f)).sort();
  for (const f of names) engine.add(`${chartName}/templates/${f}`, readFileSync(join(dir, f), 'utf8'));

  const top: Obj = {
    Values: values,
    Release: { Name: opts.releaseName ?? chartName, Namespace: opts.namespace ?? 'default', Service: 'Helm', IsInstall: true, IsUpgrade: false, Revision: 1 },
    Chart: chartObject(meta),
    Capabilities: {
      APIVersions: { Has: (v: Value) => apiVersions.has(String(v)) },
      KubeVersion: { Version: 'v1.32.0', Major: '1', Minor: '32' },
    },
  };
  const files = new Map<string, string>();
  const docs: RenderedDoc[] = [];
  for (const f of names.filter((n) => !n.startsWith('_'))) {
    const name = `${chartName}/templates/${f}`;
    const text = engine.execute(name, { ...top, Template: { Name: name, BasePath: `${chartName}/templates` } });
    files.set(f, text);
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
