package cdp

import (
	"errors"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestRoundTripToFromEvents: a request pinned to a document goes out
// without reading the tab's frame tree again while the browser's events
// say the main frame still runs that document's context (a round trip
// a call through pling mcp does not pay), and is still refused, with
// nothing sent, once the tab shows another document of the same origin.
func TestRoundTripToFromEvents(t *testing.T) {
	ctx, p, hs := pageServing(t, `<!doctype html><title>t</title><script>
window.ran = 0;
window.pling = { surface: { handle: async (req) => { window.ran++; return { ok: true, page: location.pathname }; } } };
</script>`)
	doc, err := p.Document(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := p.frameReads.Load()
	for i := 0; i < 5; i++ {
		out, err := p.RoundTripTo(ctx, doc, []byte(`{}`))
		if err != nil || string(out) != `{"ok":true,"page":"/a"}` {
			t.Fatalf("request %d: %s, %v", i, out, err)
		}
	}
	if n := p.frameReads.Load() - before; n != 0 {
		t.Errorf("five requests to the document the tab shows read the frame tree %d times, want none", n)
	}
	if _, err := p.Navigate(ctx, hs.URL+"/b"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.RoundTripTo(ctx, doc, []byte(`{}`)); !errors.Is(err, ErrDocumentGone) {
		t.Errorf("a request to the document the tab left answered %v, want ErrDocumentGone", err)
	}
	if ran, err := chromedp.Run(p.Context(), chromedp.Evaluate[int](`window.ran`)); err != nil || ran != 0 {
		t.Errorf("the next document's handle ran %d times (%v), want none", ran, err)
	}
}
