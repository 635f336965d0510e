package sitepages_test

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/demosite/site"
	"github.com/pling-go/pling/internal/helpdesk"
)

// sites are the two embedded sites and the pages each must have.
var sites = map[string]struct {
	files fs.FS
	pages []string
}{
	"demo": {site.Demo(), []string{"checkout/index.html", "checkout/placed/index.html", "index.html",
		"orders/index.html", "settings/index.html", "shop/index.html"}},
	"help desk": {helpdesk.Pages(), []string{"admin/index.html", "customers/index.html", "index.html",
		"tickets/index.html", "tickets/view.html"}},
}

// TestSites: every page of the two embedded sites renders from its layout
// to a whole document (the doctype first, a title, the navigation once,
// no template text left), and each script it loads from the site is
// there.
func TestSites(t *testing.T) {
	for name, tc := range sites {
		t.Run(name, func(t *testing.T) {
			var pages []string
			err := fs.WalkDir(tc.files, ".", func(p string, d fs.DirEntry, err error) error {
				if err == nil && strings.HasSuffix(p, ".html") {
					pages = append(pages, p)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.pages, pages); diff != "" {
				t.Fatalf("pages (-want +got):\n%s", diff)
			}
			for _, p := range pages {
				checkPage(t, tc.files, p)
			}
		})
	}
}

var (
	scriptSrc = regexp.MustCompile(`<script src="([^"]+)"`)
	title     = regexp.MustCompile(`<title>[^<{]+</title>`)
)

func checkPage(t *testing.T, site fs.FS, p string) {
	t.Helper()
	b, err := fs.ReadFile(site, p)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if !strings.HasPrefix(page, "<!doctype html>\n<html lang=\"en\">") || !strings.HasSuffix(strings.TrimSpace(page), "</html>") {
		t.Errorf("%s is not a whole document:\n%s", p, page)
	}
	if !title.MatchString(page) {
		t.Errorf("%s has no title", p)
	}
	if n := strings.Count(page, "<nav"); n != 1 {
		t.Errorf("%s has %d navigation bars, want 1", p, n)
	}
	if strings.Contains(page, "{{") || strings.Contains(page, "<no value>") {
		t.Errorf("%s has template text left:\n%s", p, page)
	}
	for _, m := range scriptSrc.FindAllStringSubmatch(page, -1) {
		f, ok := strings.CutPrefix(m[1], "/")
		if !ok {
			f = path.Join(path.Dir(p), m[1])
		}
		if strings.HasPrefix(f, "pling/") {
			continue // the module's files, served beside the site
		}
		if _, err := fs.Stat(site, f); err != nil {
			t.Errorf("%s loads %s: %v", p, m[1], err)
		}
	}
}
