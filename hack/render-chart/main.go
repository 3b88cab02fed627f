// Command render-chart renders a Helm chart's templates as `helm template` does, with the engine Helm
// itself uses (Go's text/template, sprig, and Helm's own functions: include, tpl, required, toYaml,
// fromYaml, toJson, fromJson, lookup), so the chart checks run on machines without helm.
//
// The values come on stdin as JSON, already merged with values.yaml and checked against
// values.schema.json by the caller (test/deploy/helm-chart.ts). Output is one JSON object mapping each
// template file (relative to templates/) to its rendered text; a template error is printed to stderr
// and the exit code is 1.
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go run ./hack/render-chart --chart charts/kube-identity < values.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"sigs.k8s.io/yaml"
)

// chartMetadata is Chart.yaml as Helm exposes it on .Chart (Go field names).
type chartMetadata struct {
	APIVersion  string            `json:"apiVersion"`
	Name        string            `json:"name"`
	Version     string            `json:"version"`
	AppVersion  string            `json:"appVersion"`
	Description string            `json:"description"`
	Type        string            `json:"type"`
	KubeVersion string            `json:"kubeVersion"`
	Home        string            `json:"home"`
	Icon        string            `json:"icon"`
	Keywords    []string          `json:"keywords"`
	Sources     []string          `json:"sources"`
	Annotations map[string]string `json:"annotations"`
	Deprecated  bool              `json:"deprecated"`
}

// apiVersions answers .Capabilities.APIVersions.Has.
type apiVersions []string

func (a apiVersions) Has(v string) bool {
	for _, x := range a {
		if x == v {
			return true
		}
	}
	return false
}

// The group/versions every supported cluster serves (what `helm template` assumes without --api-versions).
var builtinAPIVersions = []string{"v1", "apps/v1", "policy/v1", "rbac.authorization.k8s.io/v1", "coordination.k8s.io/v1", "certificates.k8s.io/v1"}

func main() {
	chartDir := flag.String("chart", "", "chart directory")
	release := flag.String("release", "", "release name (default: the chart name)")
	namespace := flag.String("namespace", "default", "release namespace")
	extra := flag.String("api-versions", "", "comma-separated extra API versions the cluster serves")
	flag.Parse()
	out, err := run(*chartDir, *release, *namespace, *extra, os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
}

func run(chartDir, release, namespace, extra string, valuesIn io.Reader) ([]byte, error) {
	if chartDir == "" {
		return nil, fmt.Errorf("--chart is required")
	}
	var meta chartMetadata
	if err := readYAML(filepath.Join(chartDir, "Chart.yaml"), &meta); err != nil {
		return nil, err
	}
	values := map[string]interface{}{}
	if err := json.NewDecoder(valuesIn).Decode(&values); err != nil && err != io.EOF {
		return nil, fmt.Errorf("values on stdin: %w", err)
	}
	if release == "" {
		release = meta.Name
	}
	versions := append(apiVersions{}, builtinAPIVersions...)
	if extra != "" {
		versions = append(versions, strings.Split(extra, ",")...)
	}
	files, err := loadFiles(chartDir)
	if err != nil {
		return nil, err
	}
	top := map[string]interface{}{
		"Values":  values,
		"Release": map[string]interface{}{"Name": release, "Namespace": namespace, "Service": "Helm", "IsInstall": true, "IsUpgrade": false, "Revision": 1},
		"Chart":   meta,
		"Files":   files,
		"Capabilities": map[string]interface{}{
			"APIVersions": versions,
			"KubeVersion": map[string]interface{}{"Version": "v1.32.0", "GitVersion": "v1.32.0", "Major": "1", "Minor": "32"},
		},
	}
	rendered, err := renderTemplates(meta.Name, filepath.Join(chartDir, "templates"), top)
	if err != nil {
		return nil, err
	}
	return json.Marshal(rendered)
}

func readYAML(file string, into interface{}) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// renderTemplates parses every file of templates/ into one set (partials included) and executes each
// that does not start with "_", as Helm does, with .Template set per file.
func renderTemplates(chartName, dir string, top map[string]interface{}) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	t := template.New("gotpl").Option("missingkey=zero")
	t.Funcs(funcMap(t))
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		text, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		name := path.Join(chartName, "templates", e.Name())
		if _, err := t.New(name).Parse(string(text)); err != nil {
			return nil, err
		}
		names = append(names, e.Name())
	}
	sort.Strings(names)
	out := map[string]string{}
	for _, file := range names {
		if strings.HasPrefix(file, "_") {
			continue
		}
		name := path.Join(chartName, "templates", file)
		vals := map[string]interface{}{"Template": map[string]interface{}{"Name": name, "BasePath": path.Join(chartName, "templates")}}
		for k, v := range top {
			vals[k] = v
		}
		var buf strings.Builder
		if err := t.ExecuteTemplate(&buf, name, vals); err != nil {
			return nil, err
		}
		out[file] = strings.ReplaceAll(buf.String(), "<no value>", "")
	}
	return out, nil
}

// funcMap is sprig's text functions without env/expandenv (Helm removes them), plus Helm's own.
func funcMap(t *template.Template) template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	f["toYaml"] = toYAML
	f["fromYaml"] = fromYAML
	f["fromYamlArray"] = fromYAMLArray
	f["toJson"] = toJSON
	f["fromJson"] = fromJSON
	f["fromJsonArray"] = fromJSONArray
	f["include"] = func(name string, data interface{}) (string, error) {
		var buf strings.Builder
		err := t.ExecuteTemplate(&buf, name, data)
		return buf.String(), err
	}
	f["tpl"] = func(text string, vals interface{}) (string, error) {
		clone, err := t.Clone()
		if err != nil {
			return "", err
		}
		inner, err := clone.New("tpl").Parse(text)
		if err != nil {
			return "", fmt.Errorf("cannot parse template %q: %w", text, err)
		}
		var buf strings.Builder
		if err := inner.Execute(&buf, vals); err != nil {
			return "", fmt.Errorf("error calling tpl: %w", err)
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}
	f["required"] = func(warn string, val interface{}) (interface{}, error) {
		if s, ok := val.(string); val == nil || (ok && s == "") {
			return val, fmt.Errorf("%s", warn)
		}
		return val, nil
	}
	// There is no cluster to ask: like `helm template`, lookup finds nothing.
	f["lookup"] = func(apiVersion, kind, namespace, name string) (map[string]interface{}, error) {
		return map[string]interface{}{}, nil
	}
	return f
}

func toYAML(v interface{}) string {
	data, err := yaml.Marshal(v)
	if err != nil {
		return "" // Helm swallows marshalling errors in toYaml
	}
	return strings.TrimSuffix(string(data), "\n")
}

func fromYAML(s string) map[string]interface{} {
	m := map[string]interface{}{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func fromYAMLArray(s string) []interface{} {
	a := []interface{}{}
	if err := yaml.Unmarshal([]byte(s), &a); err != nil {
		a = []interface{}{err.Error()}
	}
	return a
}

func toJSON(v interface{}) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(data)
}

func fromJSON(s string) map[string]interface{} {
	m := map[string]interface{}{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func fromJSONArray(s string) []interface{} {
	a := []interface{}{}
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		a = []interface{}{err.Error()}
	}
	return a
}

// files is .Files: the chart's files outside templates/ and Helm's own (Chart.yaml, values*), minus .helmignore.
type files map[string][]byte

func (f files) Get(name string) string { return string(f[name]) }

func (f files) GetBytes(name string) []byte { return f[name] }

// Glob keeps the files whose path matches pattern (path.Match syntax).
func (f files) Glob(pattern string) files {
	out := files{}
	for name, data := range f {
		if ok, _ := path.Match(pattern, name); ok {
			out[name] = data
		}
	}
	return out
}

// AsConfig is the files as ConfigMap data: base name to content, in YAML.
func (f files) AsConfig() string {
	m := map[string]string{}
	for name, data := range f {
		m[path.Base(name)] = string(data)
	}
	return toYAML(m)
}

func (f files) Lines(name string) []string {
	s := strings.TrimSuffix(string(f[name]), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func loadFiles(chartDir string) (files, error) {
	ignore := readHelmignore(filepath.Join(chartDir, ".helmignore"))
	out := files{}
	err := filepath.WalkDir(chartDir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(chartDir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if ignored(ignore, rel, d.IsDir()) || (d.IsDir() && (rel == "templates" || rel == "charts")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir(), rel == "Chart.yaml", rel == "Chart.lock", rel == "values.yaml", rel == "values.schema.json", rel == ".helmignore":
			return nil
		}
		data, err := os.ReadFile(p)
		out[rel] = data
		return err
	})
	return out, err
}

func readHelmignore(file string) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var patterns []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, line)
		}
	}
	return patterns
}

// ignored applies .helmignore's common forms: a glob on the base name or the path, "dir/" for directories.
func ignored(patterns []string, rel string, dir bool) bool {
	for _, p := range patterns {
		if strings.HasSuffix(p, "/") {
			if !dir {
				continue
			}
			p = strings.TrimSuffix(p, "/")
		}
		if ok, _ := path.Match(p, path.Base(rel)); ok {
			return true
		}
		if ok, _ := path.Match(p, rel); ok {
			return true
		}
	}
	return false
}
