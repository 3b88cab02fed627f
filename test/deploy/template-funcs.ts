/**
 * The Helm/sprig functions the chart uses, each following the documented Helm behaviour (toYaml sorts
 * keys and drops the trailing newline, indent pads every line, default treats empty values as unset,
 * required/fail abort the render). An unknown function is an error, never a silent empty string.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { FailError, formatValue, TemplateError, truthy, type Engine, type TemplateFunc, type Value } from './template-exec.js';

type Obj = Record<string, Value>;

const isObj = (v: Value): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** reflect.Kind names as sprig's kindIs reports them for values decoded from YAML. */
function goKind(v: Value): string {
  if (v === undefined || v === null) return 'invalid';
  if (Array.isArray(v)) return 'slice';
  if (typeof v === 'object') return 'map';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return typeof v === 'boolean' ? 'bool' : 'string';
}

function toYaml(v: Value): string {
  if (v === undefined || v === null) return 'null';
  return stringify(v, { sortMapEntries: true, lineWidth: 0, indentSeq: false }).replace(/\n$/, '');
}

function indent(n: Value, s: Value): string {
  const pad = ' '.repeat(Number(n));
  return pad + formatValue(s).replace(/\n/g, `\n${pad}`);
}

/** Go's fmt verbs used by charts: %s %v %d %q and %%. */
function printf(format: Value, ...args: Value[]): string {
  let i = 0;
  return formatValue(format).replace(/%([svdq%])/g, (_m, verb: string) => {
    if (verb === '%') return '%';
    if (i >= args.length) return `%!${verb}(MISSING)`;
    const a = args[i++];
    if (verb === 'q') return JSON.stringify(formatValue(a));
    if (verb === 'd') return String(Math.trunc(Number(a)));
    return formatValue(a);
  });
}

function compare(op: string): TemplateFunc {
  return (a: Value, b: Value) => {
    if (typeof a !== typeof b) throw new TemplateError(`${op}: incompatible types for comparison`);
    const x = a as number | string;
    const y = b as number | string;
    return op === 'lt' ? x < y : op === 'le' ? x <= y : op === 'gt' ? x > y : x >= y;
  };
}

function mergeOverwrite(dst: Value, ...srcs: Value[]): Value {
  if (!isObj(dst)) throw new TemplateError('mergeOverwrite: destination must be a map');
  for (const src of srcs) {
    if (!isObj(src)) continue;
    for (const [k, v] of Object.entries(src)) dst[k] = isObj(v) && isObj(dst[k]) ? mergeOverwrite({ ...(dst[k] as Obj) }, v) : v;
  }
  return dst;
}

/**
 * Helm's genCA makes a self-signed CA (RSA 2048). Here openssl makes a real one with the same
 * shape, so the check can prove the Secret holds a usable CA certificate and key.
 */
function genCA(cn: Value, days: Value): Obj {
  const dir = mkdtempSync(join(tmpdir(), 'genca-'));
  try {
    const key = join(dir, 'ca.key');
    const crt = join(dir, 'ca.crt');
    const args = ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', crt, '-days', String(days), '-subj', `/CN=${formatValue(cn)}`];
    execFileSync('openssl', [...args, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,digitalSignature,keyEncipherment'], { stdio: 'pipe' });
    return { Cert: readFileSync(crt, 'utf8'), Key: readFileSync(key, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const helmFuncs: Record<string, TemplateFunc> = {
  include(this: Engine, name: Value, data: Value) {
    return this.execute(formatValue(name), data);
  },
  tpl(this: Engine, src: Value, data: Value) {
    return this.executeString(formatValue(src), data);
  },
  toYaml,
  toJson: (v: Value) => JSON.stringify(v ?? null),
  indent,
  nindent: (n: Value, s: Value) => `\n${indent(n, s)}`,
  quote: (...args: Value[]) => args.filter((a) => a !== undefined && a !== null).map((a) => JSON.stringify(formatValue(a))).join(' '),
  default: (d: Value, v?: Value) => (truthy(v) ? v : d),
  empty: (v: Value) => !truthy(v),
  required(msg: Value, v: Value) {
    if (v === undefined || v === null || v === '') throw new FailError(formatValue(msg));
    return v;
  },
  fail(msg: Value): never {
    throw new FailError(formatValue(msg));
  },
  not: (v: Value) => !truthy(v),
  eq: (a: Value, ...bs: Value[]) => bs.some((b) => a === b),
  ne: (a: Value, b: Value) => a !== b,
  lt: compare('lt'),
  le: compare('le'),
  gt: compare('gt'),
  ge: compare('ge'),
  int: (v: Value) => Math.trunc(Number(v ?? 0)),
  toString: (v: Value) => formatValue(v),
  printf,
  print: (...args: Value[]) => args.map(formatValue).join(''),
  trunc: (n: Value, s: Value) => formatValue(s).slice(0, Number(n)),
  trimSuffix: (suffix: Value, s: Value) => {
    const str = formatValue(s);
    const suf = formatValue(suffix);
    return suf && str.endsWith(suf) ? str.slice(0, -suf.length) : str;
  },
  replace: (from: Value, to: Value, s: Value) => formatValue(s).split(formatValue(from)).join(formatValue(to)),
  contains: (sub: Value, s: Value) => formatValue(s).includes(formatValue(sub)),
  b64enc: (s: Value) => Buffer.from(formatValue(s)).toString('base64'),
  sha256sum: (s: Value) => createHash('sha256').update(formatValue(s)).digest('hex'),
  dict(...kv: Value[]) {
    const out: Obj = {};
    for (let i = 0; i < kv.length; i += 2) out[formatValue(kv[i])] = kv[i + 1];
    return out;
  },
  list: (...items: Value[]) => items,
  join: (sep: Value, l: Value) => (Array.isArray(l) ? l.map(formatValue).join(formatValue(sep)) : formatValue(l)),
  concat: (...lists: Value[]) => lists.flatMap((l) => (Array.isArray(l) ? l : [])),
  uniq: (l: Value) => [...new Set(Array.isArray(l) ? l : [])],
  set(d: Value, k: Value, v: Value) {
    if (!isObj(d)) throw new TemplateError('set: not a map');
    d[formatValue(k)] = v;
    return d;
  },
  hasKey: (d: Value, k: Value) => isObj(d) && Object.prototype.hasOwnProperty.call(d, formatValue(k)),
  index(this: Engine, v: Value, ...keys: Value[]) {
    let cur = v;
    for (const k of keys) cur = cur === undefined || cur === null ? undefined : (cur as Obj)[formatValue(k)];
    return cur;
  },
  kindIs: (kind: Value, v: Value) => goKind(v) === formatValue(kind),
  mergeOverwrite,
  genCA,
  /** `helm template` and `--dry-run` see no cluster: lookup returns an empty map, as here. */
  lookup: () => ({}),
};
