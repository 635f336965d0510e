package mcp_test

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// TestViewConcurrent: calls of browser.view and browser.act from many
// goroutines at once on one bridge (the race detector watches the view's
// state); every click lands once, and the page counts them all.
func TestViewConcurrent(t *testing.T) {
	s, _ := pagesSession(t, map[string]string{"/count/": `<!doctype html><title>Count</title>
<button id="b">Add one</button><p id="n">0</p>
<script>document.getElementById("b").onclick = () => { const n = document.getElementById("n"); n.textContent = String(+n.textContent + 1); };</script>`}, "/count/")
	view := text(call(t, s, "browser.view", nil))
	m := regexp.MustCompile(`button "Add one" (e\d+)`).FindStringSubmatch(view)
	if m == nil {
		t.Fatalf("no button in the view:\n%s", view)
	}
	const clicks = 6
	var wg sync.WaitGroup
	for i := 0; i < clicks; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if r := call(t, s, "browser.act", map[string]any{"do": "click", "ref": m[1]}); r.IsError {
				t.Errorf("click: %s", text(r))
			}
		}()
		go func() {
			defer wg.Done()
			if r := call(t, s, "browser.view", nil); r.IsError {
				t.Errorf("view: %s", text(r))
			}
		}()
	}
	wg.Wait()
	r := call(t, s, "browser.act", map[string]any{"do": "wait", "text": "6"})
	if got := text(r); r.IsError || !strings.Contains(got, "shows on the page") {
		t.Errorf("after %d clicks: %s\n%s", clicks, got, text(call(t, s, "browser.view", nil)))
	}
}

// TestViewFindOnALongPage: a page whose view is over the bound says how
// many lines it left out; find gives the lines with a text from the whole
// view, with refs an action can use.
func TestViewFindOnALongPage(t *testing.T) {
	var page strings.Builder
	page.WriteString(`<!doctype html><title>Long</title><p id="out"></p>`)
	for i := 0; i < 1500; i++ {
		fmt.Fprintf(&page, `<button onclick="document.getElementById('out').textContent='picked %d'">Item %d</button>`, i, i)
	}
	s, _ := pagesSession(t, map[string]string{"/long/": page.String()}, "/long/")
	whole := text(call(t, s, "browser.view", nil))
	if !strings.Contains(whole, "more lines not shown") || strings.Contains(whole, `"Item 1499"`) || len(whole) > 9000 {
		t.Errorf("the long view is not cut at its bound (%d bytes):\n%.500s", len(whole), whole)
	}
	found := text(call(t, s, "browser.view", map[string]any{"find": "item 1499"}))
	m := regexp.MustCompile(`(?m)^button "Item 1499" (e\d+)$`).FindStringSubmatch(found)
	if m == nil || strings.Contains(found, `"Item 1498"`) {
		t.Fatalf("browser.view find:\n%s", found)
	}
	if r := call(t, s, "browser.act", map[string]any{"do": "click", "ref": m[1]}); r.IsError || !strings.Contains(text(r), `"picked 1499"`) {
		t.Errorf("the click on the found button: %s", text(r))
	}
}
