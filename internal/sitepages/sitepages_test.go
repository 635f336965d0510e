package sitepages

import (
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

const testLayout = `{{define "head"}}<!doctype html>
<title>{{.title}}</title>{{with index . "script"}}
<script src="{{.}}"></script>{{end}}
{{end}}`

// TestRender: pages call the layout's templates with args; other files
// and pages without actions are copied as they are.
func TestRender(t *testing.T) {
	site := fstest.MapFS{
		"index.html":      {Data: []byte(`{{template "head" (args "title" "Home") -}}` + "\n<h1>Home</h1>\n")},
		"shop/index.html": {Data: []byte(`{{template "head" (args "title" "Shop" "script" "shop.js")}}<h1>Shop</h1>`)},
		"shop/shop.js":    {Data: []byte(`if (a {{ b }}) {}`)},
		"plain.html":      {Data: []byte("<p>a { b }</p>\n<!-- kept -->\n")},
	}
	got, err := Render(site, testLayout)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"index.html":      "<!doctype html>\n<title>Home</title>\n<h1>Home</h1>\n",
		"shop/index.html": "<!doctype html>\n<title>Shop</title>\n<script src=\"shop.js\"></script>\n<h1>Shop</h1>",
		"shop/shop.js":    `if (a {{ b }}) {}`,
		"plain.html":      "<p>a { b }</p>\n<!-- kept -->\n",
	}
	for name, w := range want {
		b, err := fs.ReadFile(got, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if diff := cmp.Diff(w, string(b)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	// The result is a well-behaved fs.FS (Open, Stat, ReadDir, Seek).
	if err := fstest.TestFS(got, "index.html", "shop/index.html", "shop/shop.js", "plain.html"); err != nil {
		t.Error(err)
	}
}

// TestRenderFails: a page that names a template or a key the layout lacks,
// or calls args with an odd count, is an error, not a page with a hole.
func TestRenderFails(t *testing.T) {
	for _, tc := range []struct{ name, page string }{
		{"unknown template", `{{template "foot" (args "title" "x")}}`},
		{"missing required key", `{{template "head" (args "script" "x.js")}}`},
		{"odd args", `{{template "head" (args "title")}}`},
		{"bad syntax", `{{template "head"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Render(fstest.MapFS{"p.html": {Data: []byte(tc.page)}}, testLayout); err == nil {
				t.Errorf("Render accepted %q", tc.page)
			}
		})
	}
}
