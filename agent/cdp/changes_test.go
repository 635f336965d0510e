package cdp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/internal/testing/require"
)

// TestChangeMark: the mark stays where it is while the page changes
// nothing, moves when its DOM changes (by its own script) and when a
// person types, and when the page's script sets a value in a form it
// declares (a prefill from its own fetch: no event, no mutation), and is
// another mark on another document — also one the page's script wrote a
// copy of the watch into, which lives in the isolated world only.
func TestChangeMark(t *testing.T) {
	ctx, p, hs := pageServing(t, `<!doctype html><title>t</title><input id="q"><p id="out">0</p>
<form data-pling-action="save"><input name="email" data-pling-param></form>
<script>globalThis.__plingChanges = { id: "fake", n: 0 };</script>`)
	mark := func() string {
		t.Helper()
		m, err := p.ChangeMark(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	first := mark()
	for i := 0; i < 3; i++ {
		time.Sleep(50 * time.Millisecond)
		if m := mark(); m != first {
			t.Fatalf("the mark moved on a page that changed nothing: %q, then %q", first, m)
		}
	}
	if _, err := p.Info(ctx); err != nil { // a look at the page changes nothing
		t.Fatal(err)
	}
	if m := mark(); m != first {
		t.Errorf("the mark moved after Info: %q, then %q", first, m)
	}
	if _, err := chromedp.Run(p.Context(), chromedp.Evaluate[string](`document.getElementById("out").textContent = "1"`)); err != nil {
		t.Fatal(err)
	}
	second := mark()
	if second == first {
		t.Errorf("the mark did not move when the page changed its DOM")
	}
	// Typing changes the input's value, not its DOM: only the input
	// event says so. (The focus itself changes nothing either.)
	if _, err := chromedp.Run(p.Context(), chromedp.Evaluate[bool](`document.getElementById("q").focus(), true`)); err != nil {
		t.Fatal(err)
	}
	if m := mark(); m != second {
		t.Errorf("the mark moved on a focus: %q, then %q", second, m)
	}
	if _, err := chromedp.Call(p.Context(), input.InsertText, input.InsertTextParams{Text: "x"}); err != nil {
		t.Fatal(err)
	}
	third := mark()
	if third == second {
		t.Errorf("the mark did not move when a person typed")
	}
	if _, err := chromedp.Run(p.Context(), chromedp.Evaluate[bool](`document.forms[0].email.value = "ana@example.com", true`)); err != nil {
		t.Fatal(err)
	}
	if m := mark(); m == third {
		t.Errorf("the mark did not move when the page's script filled a declared form")
	}
	third = mark()
	if _, err := p.Navigate(ctx, hs.URL+"/b"); err != nil {
		t.Fatal(err)
	}
	if m := mark(); m == third || m == first {
		t.Errorf("the mark on another document is an earlier one: %q", m)
	}
}

// pageServing starts Chromium on /a of a loopback server that answers
// every path with html (skipped in -short mode and without Chromium);
// the page and the server end with the test, ctx within two minutes.
func pageServing(t *testing.T, html string) (context.Context, *Page, *httptest.Server) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium: not in -short mode")
	}
	require.Chromium(t)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(html))
	}))
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	p, err := Start(ctx, hs.URL+"/a", Options{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return ctx, p, hs
}
