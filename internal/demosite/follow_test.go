package demosite

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// siteWithAuthority is the demo site following a real authority on
// loopback; it returns the site's and the authority's URLs.
func siteWithAuthority(t *testing.T) (site, api string) {
	t.Helper()
	as := authoritytest.Start(t, authority.Config{Audiences: map[string][]string{"http://shop.example": {"*"}}}, nil)
	if _, err := FetchKeys(t.Context(), nil, as.URL, 0); err != nil {
		t.Fatal(err)
	}
	s, err := New(t.Context(), fakeModule(), Demo(), Options{Brotli: 1, Authority: as.URL})
	if err != nil {
		t.Fatal(err)
	}
	ss := httptest.NewServer(s)
	t.Cleanup(ss.Close)
	return ss.URL, as.URL
}

// Every page's pling.js tag names the authority (data-authority) and its
// CSP lets the page reach that origin and no other; a URL that is no
// authority base URL stops the server from starting.
func TestFollowsAuthority(t *testing.T) {
	site, api := siteWithAuthority(t)
	for _, p := range []string{"/shop/", "/orders/", "/settings/"} {
		res, err := http.Get(site + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		page := string(b)
		if want := `<script src="/pling/pling.js" data-authority="` + api + `"`; !strings.Contains(page, want) {
			t.Errorf("%s lacks %s:\n%.600s", p, want, page)
		}
		if strings.Contains(page, "pling-keys") {
			t.Errorf("%s still carries the keys in a meta", p)
		}
		if csp, want := res.Header.Get("Content-Security-Policy"), "connect-src 'self' "+api+";"; !strings.Contains(csp, want) {
			t.Errorf("%s CSP %q, want %q", p, csp, want)
		}
	}
	for _, bad := range []string{"ftp://auth.example", "https://auth.example/v1", "https://auth.example/?a=1", "https://u@auth.example", `https://a.example"><script>`, "auth.example"} {
		if _, err := New(t.Context(), fakeModule(), Demo(), Options{Authority: bad}); err == nil {
			t.Errorf("authority %q was accepted", bad)
		}
	}
}

// TestScreensAreTheAuthoritys: the site serves no screen a person decides
// on; its screen paths send the browser to the authority's, query and
// all, so a script of the site's pages that fetches them follows a
// redirect to another origin it may not read.
func TestScreensAreTheAuthoritys(t *testing.T) {
	site, api := siteWithAuthority(t)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for path, want := range map[string]string{ConsentPath + "?code=BCDF-GHJK": api + authority.ConsentPath + "?code=BCDF-GHJK",
		ApprovalPath + "?id=abc": api + authority.ApprovalPath + "?id=abc"} {
		for _, method := range []string{"GET", "POST"} {
			req, _ := http.NewRequest(method, site+path, strings.NewReader("decision=approve"))
			res, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want || strings.Contains(string(b), "csrf") {
				t.Errorf("%s %s: HTTP %d to %q, want 303 to %q", method, path, res.StatusCode, res.Header.Get("Location"), want)
			}
		}
	}
}
