package reports

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/pubsub-conformance/harness/internal/column"
)

// The pipeline files in ci/ are copied into users' repositories, so they must at least be valid
// YAML, run the suite per backend for exactly the backends the baseline accepts, keep the JUnit
// files, and call only make targets the Makefile defines.
func TestPipelineFiles(t *testing.T) {
	base, err := ReadBaseline("../ci/baseline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var accepted []string
	releases := map[string]bool{} // "kafka@3.9.1" entries: make versions' columns, not the matrix's
	for b := range base.Backends {
		if c, err := column.Parse(b); err == nil && c.Release != "" {
			releases[b] = true
			continue
		}
		if base.IsLegacy(b) { // code no current release ships: run by name, in no template
			continue
		}
		accepted = append(accepted, b)
	}
	sort.Strings(accepted)

	makefile, mkErr := os.ReadFile("../Makefile")
	makeTarget := regexp.MustCompile(`\bmake ([a-z][a-z-]*)`)

	gitlabMatrix := func(doc map[string]any, job, key string) []any {
		m := dig(doc, job, "parallel", "matrix")
		if len(m) == 0 {
			return nil
		}
		entry, _ := m[0].(map[string]any)
		list, _ := entry[key].([]any)
		return list
	}
	for _, tt := range []struct {
		file      string
		matrix    func(doc map[string]any) []any
		versions  func(doc map[string]any) []any // the version-matrix job's BROKER_VERSIONS
		junitKept string
	}{
		{"../ci/github-actions.yml", func(doc map[string]any) []any {
			return dig(doc, "jobs", "conformance", "strategy", "matrix", "backend")
		}, func(doc map[string]any) []any {
			return dig(doc, "jobs", "versions", "strategy", "matrix", "release")
		}, "reports/out/"},
		{"../ci/gitlab-ci.yml", func(doc map[string]any) []any {
			return gitlabMatrix(doc, "conformance", "PUBSUB_BACKENDS")
		}, func(doc map[string]any) []any {
			return gitlabMatrix(doc, "versions", "BROKER_VERSIONS")
		}, "junit: reports/out/junit-*.xml"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			raw, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := yaml.Unmarshal(raw, &doc); err != nil {
				t.Fatalf("not valid YAML: %v", err)
			}
			var backends []string
			for _, b := range tt.matrix(doc) {
				backends = append(backends, b.(string))
			}
			sort.Strings(backends)
			if !slices.Equal(backends, accepted) {
				t.Errorf("matrix runs %v, the baseline accepts %v (legacy ones left out): the gate would report missing backends", backends, accepted)
			}
			text := string(raw)
			if !strings.Contains(text, tt.junitKept) {
				t.Errorf("JUnit files are not kept (%q)", tt.junitKept)
			}
			var targets []string
			for _, m := range makeTarget.FindAllStringSubmatch(text, -1) {
				targets = append(targets, m[1])
			}
			// The version matrix (docs/versions.md): kind=release entries, and every release
			// the baseline keys (kafka@3.9.1) is one the job runs.
			ran := map[string]bool{}
			for _, e := range tt.versions(doc) {
				kv, _ := e.(string)
				kind, rels, ok := strings.Cut(kv, "=")
				if !ok || kind == "" || rels == "" {
					t.Errorf("versions job entry %q: want kind=release[,release]", kv)
					continue
				}
				for _, r := range strings.Split(rels, ",") {
					ran[kind+"="+r] = true
				}
			}
			if len(ran) == 0 {
				t.Errorf("no version-matrix job (versions) with broker releases")
			}
			for label := range releases {
				c, _ := column.Parse(label)
				name, rel := c.Registered(), c.Release
				kind := "kafka"
				for _, k := range []string{"pulsar", "rabbitmq"} {
					if strings.Contains(name, k) {
						kind = k
					}
				}
				if !ran[kind+"="+rel] {
					t.Errorf("the baseline accepts %s, but the versions job runs no %s=%s", label, kind, rel)
				}
			}
			for _, want := range []string{"conformance", "report", "gate", "versions"} {
				if !slices.Contains(targets, want) {
					t.Errorf("does not call make %s", want)
				}
			}
			if mkErr != nil {
				t.Logf("no Makefile yet (%v): targets %v not checked against it", mkErr, targets)
				return
			}
			for _, target := range targets {
				if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `\s*:`).Match(makefile) {
					t.Errorf("calls make %s, which the Makefile does not define", target)
				}
			}
		})
	}
}

func dig(doc map[string]any, path ...string) []any {
	var cur any = doc
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	list, _ := cur.([]any)
	return list
}
