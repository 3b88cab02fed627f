/**
 * Renders a Helm chart directory the way `helm template` does (hack/chart-render.mjs: values.yaml
 * deep-merged with overrides and validated against values.schema.json, the templates rendered by
 * hack/render-chart), the output split into YAML documents for the tests.
 */
import { parseAllDocuments } from 'yaml';
import { loadValues, renderWithGo } from '../../hack/chart-render.mjs';

export { loadValues };

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
