package apisurface

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOneWayToConfigure: no public package offers a setting two ways, an
// option WithX beside a function X or a method X that takes arguments
// (an option WithResume(token) beside a method Resume(…, token)): a user should not have to learn which of two spellings
// wins (docs/style.md "Configuration: options for libraries, one Config
// for servers"). A getter X() beside WithX is not a second way.
func TestOneWayToConfigure(t *testing.T) {
	funcLine := regexp.MustCompile(`^func (\([^)]*\) )?(\w+)\((.*)$`)
	for _, pkg := range publicPackages {
		t.Run(pkg, func(t *testing.T) {
			golden, err := os.ReadFile(filepath.Join("testdata", strings.ReplaceAll(pkg, "/", "_")+".api"))
			if err != nil {
				t.Fatal(err)
			}
			options := map[string]bool{} // X of each top-level WithX
			setters := map[string]string{}
			for _, line := range strings.Split(string(golden), "\n") {
				m := funcLine.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				name, takesArgs := m[2], !strings.HasPrefix(m[3], ")")
				if m[1] == "" && strings.HasPrefix(name, "With") && len(name) > len("With") {
					options[strings.TrimPrefix(name, "With")] = true
				}
				if takesArgs {
					setters[name] = line
				}
			}
			for x := range options {
				if line, ok := setters[x]; ok {
					t.Errorf("With%s and %q set one thing two ways; keep one", x, line)
				}
			}
		})
	}
}
