package gosrc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPackage: a package's sources are its .go files but the tests,
// sorted, with their bytes; a directory and other files are not.
func TestPackage(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"b.go": "package p // b", "a_js.go": "//go:build js\n\npackage p", "a_test.go": "package p",
		"README.md": "p", "x_gen.go": "package p // gen",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.go"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := Package(t, dir)
	want := []File{
		{Name: "a_js.go", Src: []byte("//go:build js\n\npackage p")},
		{Name: "b.go", Src: []byte("package p // b")},
		{Name: "x_gen.go", Src: []byte("package p // gen")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Package (-want +got):\n%s", diff)
	}
}
