/**
 * hack/render-chart renders as Helm does: Go's text/template and sprig, plus Helm's own functions
 * (include, tpl, required, toYaml, fromYaml, toJson, lookup), .Files, .Capabilities and missing values
 * printed as nothing. Each case is a one-template chart in a temp directory.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeWithTools } from '../helpers/tools.js';
import { RENDERER_TOOLS, renderWithGo, type GoRenderOptions } from '../../hack/chart-render.mjs';

let chartDir: string;

/** Renders `template` (plus `_helpers.tpl` and extra chart files) with `values`; returns its text. */
function render(template: string, values: unknown = {}, extra: Record<string, string> = {}, opts: GoRenderOptions = {}): string {
  rmSync(chartDir, { recursive: true, force: true });
  mkdirSync(path.join(chartDir, 'templates'), { recursive: true });
  writeFileSync(path.join(chartDir, 'Chart.yaml'), 'apiVersion: v2\nname: demo\nversion: 1.2.3\nappVersion: "4.5"\n');
  writeFileSync(path.join(chartDir, 'values.yaml'), '{}\n');
  writeFileSync(path.join(chartDir, '.helmignore'), '*.bak\nskipped/\n');
  writeFileSync(path.join(chartDir, 'templates', 't.yaml'), template);
  for (const [file, text] of Object.entries(extra)) {
    mkdirSync(path.dirname(path.join(chartDir, file)), { recursive: true });
    writeFileSync(path.join(chartDir, file), text);
  }
  return renderWithGo(chartDir, values, opts).get('t.yaml') ?? '';
}

describeWithTools(RENDERER_TOOLS)('the Go chart renderer', () => {
  beforeAll(() => {
    chartDir = mkdtempSync(path.join(os.tmpdir(), 'kube-identity-chart-'));
  });
  afterAll(() => rmSync(chartDir, { recursive: true, force: true }));

  it('sets the built-in objects as helm template does', () => {
    const t = '{{ .Release.Name }}/{{ .Release.Namespace }}/{{ .Release.Service }} {{ .Chart.Name }}-{{ .Chart.Version }}-{{ .Chart.AppVersion }} {{ .Template.Name }}';
    expect(render(t, {}, {}, { releaseName: 'rel', namespace: 'ns' })).toBe('rel/ns/Helm demo-1.2.3-4.5 demo/templates/t.yaml');
    expect(render('{{ .Release.Name }}')).toBe('demo');
    const has = '{{ .Capabilities.APIVersions.Has "apps/v1" }} {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" }}';
    expect(render(has)).toBe('true false');
    expect(render(has, {}, {}, { apiVersions: ['monitoring.coreos.com/v1'] })).toBe('true true');
  });

  it('prints a missing value as nothing and fails on a field of a missing map', () => {
    expect(render('[{{ .Values.missing }}]')).toBe('[]');
    expect(() => render('{{ .Values.missing.deeper }}')).toThrow(/nil pointer evaluating interface \{\}\.deeper/);
  });

  it('includes partials (with nindent), and templates strings with tpl against the release', () => {
    const helpers = { 'templates/_helpers.tpl': '{{- define "lbl" -}}\nname: {{ .n }}\nzone: {{ .z }}\n{{- end }}' };
    expect(render('labels:{{ include "lbl" .Values | nindent 2 }}', { n: 'a', z: 'b' }, helpers)).toBe('labels:\n  name: a\n  zone: b');
    expect(render('{{ tpl .Values.s $ }}', { s: 'name: {{ .Release.Name }}-x' }, {}, { releaseName: 'r' })).toBe('name: r-x');
  });

  it('fails with the message of required and fail', () => {
    expect(() => render('{{ required "x is required" .Values.x }}')).toThrow(/x is required/);
    expect(() => render('{{ required "x is required" .Values.x }}', { x: '' })).toThrow(/x is required/);
    expect(render('{{ required "x is required" .Values.x }}', { x: 'v' })).toBe('v');
    expect(() => render('{{ fail "boom" }}')).toThrow(/boom/);
  });

  it('has Helm\'s YAML and JSON functions (sigs.k8s.io/yaml: sorted keys, no trailing newline)', () => {
    expect(render('{{ toYaml .Values.v }}', { v: { b: [1], a: 'x' } })).toBe('a: x\nb:\n- 1');
    expect(render('{{ (fromYaml "a: {b: 2}").a.b }} {{ (fromYaml ": bad").Error | empty | not }}')).toBe('2 true');
    expect(render('{{ toJson .Values.v }} {{ (fromJson "{\\"k\\": [3]}").k }}', { v: { b: 1, a: 'x' } })).toBe('{"a":"x","b":1} [3]');
  });

  it('answers lookup with nothing, as helm template does without a cluster', () => {
    expect(render('{{ lookup "v1" "Secret" "ns" "name" | empty }}')).toBe('true');
  });

  it('has sprig, without env', () => {
    expect(render('{{ .Values.v | quote }} {{ printf "%s-%d" "a" 3 }} {{ "abcdef" | trunc 3 }} {{ default "d" "" }} {{ gt (int "3") 1 }}', { v: 'q"' })).toBe(
      '"q\\"" a-3 abc d true',
    );
    expect(render('{{ toYaml (mergeOverwrite (dict "a" 1 "b" 2) .Values.o) }}', { o: { b: 3 } })).toBe('a: 1\nb: 3');
    expect(() => render('{{ env "HOME" }}')).toThrow(/function "env" not defined/);
  });

  it('reads chart files through .Files, leaving out templates, Helm\'s own files and .helmignore', () => {
    const extra = { 'dashboards/a.json': '{"a":1}\n', 'dashboards/b.json': '{}', 'dashboards/old.bak': 'x', 'skipped/c.json': 'y' };
    expect(render('{{ .Files.Get "dashboards/a.json" }}', {}, extra)).toBe('{"a":1}\n');
    expect(render('{{ range $p, $_ := .Files.Glob "*/*" }}{{ $p }} {{ end }}', {}, extra)).toBe('dashboards/a.json dashboards/b.json ');
    expect(render('{{ .Files.Get "Chart.yaml" | empty }} {{ .Files.Get "templates/t.yaml" | empty }}', {}, extra)).toBe('true true');
    expect(render('{{ (.Files.Glob "dashboards/*.json").AsConfig }}', {}, extra)).toBe('a.json: |\n  {"a":1}\nb.json: \'{}\'');
  });
});
