package workload

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LoadScenarios reads the scenario bundles (*.json) of dir, by name (the
// file name without .json): what New derives its templates from.
func LoadScenarios(dir string) (map[string][]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = b
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scenario bundles (*.json) in %s", dir)
	}
	return out, nil
}
