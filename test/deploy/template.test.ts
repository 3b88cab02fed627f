/** The chart renderer follows Go text/template and sprig semantics for the constructs the chart uses. */
import { Engine, FailError } from './template-exec.js';
import { helmFuncs } from './template-funcs.js';

function render(src: string, data: unknown, partials: Record<string, string> = {}): string {
  const e = new Engine(helmFuncs);
  for (const [name, text] of Object.entries(partials)) e.add(name, text);
  e.add('main', src);
  return e.execute('main', data);
}

describe('Go template subset', () => {
  it('trims whitespace on the marked side only', () => {
    expect(render('a  {{- "b" }}  c', {})).toBe('ab  c');
    expect(render('a  {{ "b" -}}  \n c', {})).toBe('a  bc');
    expect(render('x{{/* comment */}}y', {})).toBe('xy');
  });

  it('chains if / else if / else with one end, using Go truthiness', () => {
    const t = '{{ if .a }}A{{ else if .b }}B{{ else }}C{{ end }}';
    expect([render(t, { a: 1 }), render(t, { a: 0, b: 'x' }), render(t, { a: [], b: {} })]).toEqual(['A', 'B', 'C']);
  });

  it('ranges over lists and sorted maps, with variables and else', () => {
    expect(render('{{ range $i, $v := .l }}{{ $i }}={{ $v }};{{ end }}', { l: ['a', 'b'] })).toBe('0=a;1=b;');
    expect(render('{{ range $k, $v := .m }}{{ $k }}:{{ $v }} {{ end }}', { m: { z: 1, a: 2 } })).toBe('a:2 z:1 ');
    expect(render('{{ range .l }}x{{ else }}empty{{ end }}', { l: [] })).toBe('empty');
    expect(render('{{ range .l }}{{ . }}{{ $.sep }}{{ end }}', { l: [1, 2], sep: '|' })).toBe('1|2|');
  });

  it('rebinds dot in with, and scopes variables to their block', () => {
    expect(render('{{ with .a }}{{ .b }}{{ else }}none{{ end }}', { a: { b: 'B' } })).toBe('B');
    expect(render('{{ with .a }}{{ .b }}{{ else }}none{{ end }}', { a: {} })).toBe('none');
    expect(render('{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}', {})).toBe('2');
    expect(() => render('{{ if true }}{{ $y := 1 }}{{ end }}{{ $y }}', {})).toThrow(/undefined variable: \$y/);
  });

  it('includes defined templates with their own dot and indents them', () => {
    const partials = { '_h.tpl': '{{- define "lbl" -}}\nname: {{ .n }}\nzone: {{ .z }}\n{{- end }}' };
    expect(render('labels:{{ include "lbl" .m | nindent 2 }}', { m: { n: 'a', z: 'b' } }, partials)).toBe('labels:\n  name: a\n  zone: b');
  });

  it('follows Go on missing values: a missing key prints empty, a field of nil fails', () => {
    expect(render('[{{ .missing }}]', {})).toBe('[]');
    expect(() => render('{{ .missing.deeper }}', {})).toThrow(/nil pointer evaluating interface \{\}\.deeper/);
  });

  it('short-circuits and/or, calls methods with arguments and reads fields of parenthesised values', () => {
    expect(render('{{ and false (fail "boom") }}', {})).toBe('false');
    expect(render('{{ or "" "fallback" }}', {})).toBe('fallback');
    expect(render('{{ .Caps.Has "x/v1" }}', { Caps: { Has: (v: unknown) => v === 'x/v1' } })).toBe('true');
    expect(render('{{ (dict "a" "b").a }}', {})).toBe('b');
    expect(render('{{ default "d" (dict "a" "b").zz }}', {})).toBe('d');
  });

  it('implements the sprig functions as Helm does', () => {
    expect(render('{{ toYaml .v }}', { v: { b: [1], a: 'x' } })).toBe('a: x\nb:\n- 1');
    expect(render('{{ .v | quote }} {{ printf "%s-%d" "a" 3 }} {{ "abcdef" | trunc 3 }} {{ "ab-" | trimSuffix "-" }}', { v: 'q"' })).toBe('"q\\"" a-3 abc ab');
    expect(render('{{ default "d" "" }} {{ default "d" "v" }} {{ empty .l }} {{ gt (int "3") 1 }}', { l: [] })).toBe('d v true true');
    expect(render('{{ toYaml (mergeOverwrite (dict "a" 1 "b" 2) .o) }}', { o: { b: 3 } })).toBe('a: 1\nb: 3');
    expect(() => render('{{ required "need x" .x }}', {})).toThrow(FailError);
  });

  it('rejects what it cannot render faithfully', () => {
    expect(() => render('{{ nosuchfunc 1 }}', {})).toThrow(/function "nosuchfunc" not defined/);
    expect(() => render('{{ block "x" . }}{{ end }}', {})).toThrow(/not supported/);
    expect(() => render('{{ if .a }}unterminated', {})).toThrow(/unexpected EOF/);
    expect(() => render('{{ end }}', {})).toThrow(/unexpected \{\{end\}\}/);
  });
});
