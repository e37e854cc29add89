// Package promql runs PromQL test scripts (the load/eval language of Prometheus's promqltest, whose
// series notation is promtool's) through Prometheus's own engine, at the version this module's
// go.mod and go.sum pin. scripts/ensure-promql.sh builds it once with `go test -c`; the alerts of
// `interlock manifest --monitoring` are proven with it (test/cli/commands/manifest/).
//
//	promql.test -scripts FILE_OR_DIRECTORY
//
// A directory runs each *.promql file in it, in name order. The run fails with the engine's own
// message, naming the script and its line.
package promql

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/prometheus/prometheus/promql/promqltest"
)

var scripts = flag.String("scripts", "", "a promqltest script, or a directory of *.promql scripts")

func TestScripts(t *testing.T) {
	files, err := scriptFiles(*scripts)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			content, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			engine := promqltest.NewTestEngine(t, false, 0, promqltest.DefaultMaxSamplesPerQuery)
			promqltest.RunTest(t, string(content), engine)
		})
	}
}

// scriptFiles is the script named, or the *.promql scripts of the directory named; never none, so
// that a run given a wrong path or an empty directory fails instead of passing on nothing.
func scriptFiles(path string) ([]string, error) {
	if path == "" {
		return nil, fmt.Errorf("promql: -scripts names no script or directory")
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "*.promql"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("promql: no *.promql script in %s", path)
	}
	sort.Strings(files)
	return files, nil
}
