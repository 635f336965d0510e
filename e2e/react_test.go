package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/testing/npmtest"
	"github.com/pling-go/pling/schema"
)

// reactVersions are the packages the React app is built and checked
// with, installed once into the user's cache directory: React 19 and its
// types (the binding's peer dependency), and esbuild.
var reactVersions = []npmtest.Package{
	{Name: "react", Version: "19.3.1"},
	{Name: "react-dom", Version: "19.3.1"},
	{Name: "@types/react", Version: "19.3.3"},
	{Name: "@types/react-dom", Version: "19.3.0"},
	{Name: "esbuild", Version: "0.28.2"},
}

// TestReact: the React binding (@pling/page/react, docs/page-api.md §8)
// from the packed tarball, in an app bundled by esbuild as a development
// build (so StrictMode mounts, unmounts and mounts again), driven by the
// agent client over CDP in Chromium; and its types under tsc --strict
// with @types/react 19. It skips without node and npm unless
// PLING_REQUIRE_NPM=1 (CI).
func TestReact(t *testing.T) {
	n := npmTools(t)
	d := dist(t)
	deps := filepath.Join(npmtest.Install(t, reactVersions...), "node_modules")
	tsc := typescript(t)
	proj := n.installPackage(t, d)
	mods := filepath.Join(proj, "node_modules")
	if err := os.MkdirAll(filepath.Join(mods, "@types"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"react", "react-dom", "scheduler", "csstype", "@types/react", "@types/react-dom"} {
		if err := os.Symlink(filepath.Join(deps, p), filepath.Join(mods, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Dir(filepath.Dir(tsc)), filepath.Join(mods, "typescript")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"app.jsx", "index.html", "usage.tsx", "tsconfig.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "react", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proj, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("the hooks type-check under --strict", func(t *testing.T) {
		if out, err := n.sh(proj, n.node, tsc, "-p", "tsconfig.json"); err != nil {
			t.Errorf("tsc --strict usage.tsx: %v\n%s", err, out)
		}
	})

	t.Run("the docs' ts and tsx blocks type-check", func(t *testing.T) {
		blocks := docCode(t, "ts", "tsx")
		if len(blocks) < 3 {
			t.Fatalf("found %d ```ts/```tsx blocks in the README and docs/, want the guide's and the React section's", len(blocks))
		}
		var files []string
		names := map[string]string{}
		i := 0
		for name, src := range blocks {
			ext := ".ts"
			if strings.Contains(src, "</") || strings.Contains(src, "/>") {
				ext = ".tsx"
			}
			f := fmt.Sprintf("doc%d%s", i, ext)
			i++
			names[f] = name
			files = append(files, f)
			// A block is a module of its own, as in the reader's project.
			if err := os.WriteFile(filepath.Join(proj, f), []byte(src+"\nexport {};\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cfg, _ := json.Marshal(map[string]any{
			"compilerOptions": map[string]any{"strict": true, "noEmit": true, "target": "es2022", "module": "nodenext",
				"moduleResolution": "nodenext", "jsx": "react-jsx", "lib": []string{"es2022", "dom"}, "types": []string{}},
			"files": files,
		})
		if err := os.WriteFile(filepath.Join(proj, "tsconfig.docs.json"), cfg, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := n.sh(proj, n.node, tsc, "-p", "tsconfig.docs.json")
		if err != nil {
			for f, name := range names {
				out = strings.ReplaceAll(out, f, name)
			}
			t.Errorf("tsc --strict on the docs' blocks: %v\n%s", err, out)
		}
	})

	out, err := n.sh(proj, filepath.Join(deps, ".bin", "esbuild"), "app.jsx", "--bundle", "--format=iife", "--jsx=automatic",
		`--define:process.env.NODE_ENV="development"`, "--outfile=app.js", "--log-level=warning")
	if err != nil {
		t.Fatalf("esbuild app.jsx: %v\n%s", err, out)
	}
	pages := http.NewServeMux()
	pages.Handle("/test/react/", http.StripPrefix("/test/react/", http.FileServer(http.Dir(proj))))
	site := startBrowserSite(t, d, pages)
	tb := site.open(t, "/test/react/index.html")
	tb.waitJS(`window.app && window.effects > 0`)

	greet := func(d *schema.SurfaceDescription) int {
		n := 0
		for _, c := range d.Capabilities {
			if c.ID == "greet" {
				n++
			}
		}
		return n
	}
	records := func(d *schema.SurfaceDescription) []string {
		var ids []string
		for _, it := range d.Context.Records["item"].Items {
			ids = append(ids, it.ID)
		}
		return ids
	}

	t.Run("StrictMode's double mount leaves one capability", func(t *testing.T) {
		tb := tb.on(t)
		if n := eval[int](tb, `window.effects`); n != 2 {
			t.Fatalf("Greeter's effect ran %d times: not StrictMode's development double mount", n)
		}
		d := tb.describeUntil("greet", func(d *schema.SurfaceDescription) bool { return greet(d) > 0 })
		if n := greet(d); n != 1 {
			t.Errorf("greet is declared %d times, want 1: %v", n, ids(d))
		}
		for _, u := range d.Context.Unavailable {
			if u.ID == "greet" {
				t.Errorf("greet is unavailable after the double mount: %+v", u)
			}
		}
	})
	t.Run("a new handler runs without a new declaration", func(t *testing.T) {
		tb := tb.on(t)
		before := tb.describe().Revision
		tb.waitJS(`(app.setVersion(2), true)`)
		tb.waitJS(`app.rendered.version === 2`)
		d := tb.describe()
		if n := greet(d); n != 1 {
			t.Errorf("greet is declared %d times after the re-render, want 1: %v", n, ids(d))
		}
		if d.Revision != before {
			t.Errorf("the re-render changed the revision %v → %v: the action was re-declared", before, d.Revision)
		}
		r := tb.mustInvoke("greet", map[string]any{"name": "ada"})
		var v string
		_ = json.Unmarshal(r.Value, &v)
		if v != "hello ada from v2" {
			t.Errorf("greet returned %q, want the new handler's %q", v, "hello ada from v2")
		}
		expectationsMet(t, r, "runs")
		tb.waitJS(`app.rendered.lastRun === 2`)
	})
	t.Run("state updates are seen by describe", func(t *testing.T) {
		tb := tb.on(t)
		d := tb.describeUntil("runs 1", func(d *schema.SurfaceDescription) bool { return num(t, d.Context.States["runs"]) == 1 })
		if got := num(t, d.Context.States["lastRun"]); got != 2 {
			t.Errorf("lastRun = %v, want 2", got)
		}
		tb.mustInvoke("greet", map[string]any{"name": "bo"})
		tb.describeUntil("runs 2", func(d *schema.SurfaceDescription) bool { return num(t, d.Context.States["runs"]) == 2 })
	})
	t.Run("records follow the list", func(t *testing.T) {
		tb := tb.on(t)
		d := tb.describe()
		if diff := cmp.Diff([]string{"a", "b"}, records(d)); diff != "" {
			t.Fatalf("records (-want +got):\n%s", diff)
		}
		tb.waitJS(`(app.setItems((xs) => [...xs, {id: "c", label: "Cherry"}]), true)`)
		tb.describeUntil("record c", func(d *schema.SurfaceDescription) bool { return cmp.Equal([]string{"a", "b", "c"}, records(d)) })
		if r := tb.mustInvoke("remove@item", map[string]any{"record": "a"}); string(r.Value) != `"a"` {
			t.Errorf("remove@item a returned %s", r.Value)
		}
		tb.waitJS(`app.rendered.items === 2`)
		tb.describeUntil("records b, c", func(d *schema.SurfaceDescription) bool { return cmp.Equal([]string{"b", "c"}, records(d)) })
	})
	t.Run("unmount disposes", func(t *testing.T) {
		tb := tb.on(t)
		tb.waitJS(`(app.setShown(false), true)`)
		tb.describeUntil("no greet", func(d *schema.SurfaceDescription) bool { return greet(d) == 0 })
		tb.waitJS(`(app.setShown(true), true)`)
		d := tb.describeUntil("greet again", func(d *schema.SurfaceDescription) bool { return greet(d) > 0 })
		if n := greet(d); n != 1 {
			t.Errorf("greet is declared %d times after remounting, want 1", n)
		}
	})
}
