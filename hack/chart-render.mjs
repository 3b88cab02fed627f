#!/usr/bin/env node
/**
 * Renders the Helm chart without helm, as `helm template` does: values.yaml deep-merged with the
 * `-f` files and `--set` values (Helm's coalescing), checked against values.schema.json, then every
 * template rendered by hack/render-chart (Go's text/template, sprig and Helm's functions).
 *
 *   node hack/chart-render.mjs [--chart DIR] [-f values.yaml]... [--set a.b=c]... [--namespace NS]
 *                             [--release NAME] [--api-versions monitoring.coreos.com/v1,...]
 *
 * prints the rendered manifests, each after a `# Source:` line (NOTES.txt left out); a schema or
 * template error is printed on stderr with exit code 1. `make chart-render` runs it; the chart tests
 * import its functions. Plain JavaScript so it runs with node alone, before any build.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { parse } from 'yaml';

const SOURCE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'render-chart');
const GO_ENV = { ...process.env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode' };

/** The system tools rendering needs (hack/ensure-tools.sh installs them). */
export const RENDERER_TOOLS = ['go'];

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Helm's coalescing: overrides win, maps merge recursively, null removes a default. */
export function mergeValues(base, over) {
  const out = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === null) delete out[k];
    else out[k] = isObj(v) && isObj(out[k]) ? mergeValues(out[k], v) : v;
  }
  return out;
}

/** Compiled schemas by their text: compiling one takes Ajv far longer than validating (a second under load). */
const validators = new Map();

/** values.yaml merged with `overrides`, checked against values.schema.json (throws naming what is wrong). */
export function loadValues(chartDir, overrides = {}) {
  const defaults = parse(readFileSync(path.join(chartDir, 'values.yaml'), 'utf8')) ?? {};
  const values = mergeValues(defaults, overrides);
  const schemaPath = path.join(chartDir, 'values.schema.json');
  if (existsSync(schemaPath)) {
    const schema = readFileSync(schemaPath, 'utf8');
    let validate = validators.get(schema);
    if (!validate) {
      validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(JSON.parse(schema));
      validators.set(schema, validate);
    }
    if (!validate(values)) throw new Error(`values don't meet the specifications of the schema: ${JSON.stringify(validate.errors)}`);
  }
  return values;
}

let built;

/** The renderer binary, built unless this source version's binary is already in the temp directory. */
export function rendererBinary() {
  if (built) return built;
  const source = readFileSync(path.join(SOURCE_DIR, 'main.go'));
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const bin = path.join(os.tmpdir(), `kube-identity-render-chart-${hash}`);
  if (!existsSync(bin)) {
    // Build beside the target and rename, so parallel jest workers never run a half-written file.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-render-chart-build-'));
    try {
      execFileSync('go', ['build', '-o', path.join(dir, 'render-chart'), '.'], { cwd: SOURCE_DIR, env: GO_ENV, stdio: ['ignore', 'ignore', 'pipe'] });
      renameSync(path.join(dir, 'render-chart'), bin);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  built = bin;
  return bin;
}

/** Renders every template of `chartDir` with `values` (already merged and validated); file name -> text. */
export function renderWithGo(chartDir, values, opts = {}) {
  const args = ['--chart', chartDir, '--namespace', opts.namespace ?? 'default'];
  if (opts.releaseName) args.push('--release', opts.releaseName);
  if (opts.apiVersions?.length) args.push('--api-versions', opts.apiVersions.join(','));
  let out;
  try {
    out = execFileSync(rendererBinary(), args, { input: JSON.stringify(values), encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  } catch (err) {
    throw new Error(err.stderr ? String(err.stderr).trim() : String(err), { cause: err });
  }
  return new Map(Object.entries(JSON.parse(out)));
}

/** `--set a.b=c`: a nested override; the value is read as YAML (true, 2, [x]) as Helm reads it. */
export function setValue(values, assignment) {
  const eq = assignment.indexOf('=');
  if (eq <= 0) throw new Error(`--set ${assignment}: want key.path=value`);
  const keys = assignment.slice(0, eq).split('.');
  const last = keys.pop();
  let at = values;
  for (const k of keys) at = isObj(at[k]) ? at[k] : (at[k] = {});
  at[last] = parse(assignment.slice(eq + 1)) ?? null;
  return values;
}

/** The command line: the chart, the overrides and the release to render for. */
function parseArgs(argv) {
  const opts = { chart: 'charts/kube-identity', namespace: 'default', release: '', apiVersions: [], overrides: {} };
  const take = {
    '--chart': (v) => (opts.chart = v),
    '-f': (v) => (opts.overrides = mergeValues(opts.overrides, parse(readFileSync(v, 'utf8')) ?? {})),
    '--set': (v) => (opts.overrides = setValue(opts.overrides, v)),
    '--namespace': (v) => (opts.namespace = v),
    '--release': (v) => (opts.release = v),
    '--api-versions': (v) => opts.apiVersions.push(...v.split(',').filter(Boolean)),
  };
  take['--values'] = take['-f'];
  take['-n'] = take['--namespace'];
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (!Object.hasOwn(take, flag)) throw new Error(`unknown flag ${flag}`);
    if (value === undefined) throw new Error(`${flag} needs a value`);
    take[flag](value);
  }
  return opts;
}

function main(argv) {
  const opts = parseArgs(argv);
  const chartName = parse(readFileSync(path.join(opts.chart, 'Chart.yaml'), 'utf8')).name;
  const values = loadValues(opts.chart, opts.overrides);
  const files = renderWithGo(opts.chart, values, { namespace: opts.namespace, releaseName: opts.release || chartName, apiVersions: opts.apiVersions });
  for (const [file, text] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
    if (file === 'NOTES.txt' || text.trim() === '') continue;
    process.stdout.write(`---\n# Source: ${chartName}/templates/${file}\n${text.trim()}\n`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`chart-render: ${err.message}\n`);
    process.exit(1);
  }
}
