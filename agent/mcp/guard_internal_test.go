package mcp

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/agent"
)

// docBrowser is a DocumentBrowser that records what RoundTripTo got.
type docBrowser struct {
	Browser
	sent []string
}

func (d *docBrowser) Document(context.Context) (Document, error) { return Document{}, nil }

func (d *docBrowser) RoundTripTo(_ context.Context, doc Document, req []byte) ([]byte, error) {
	d.sent = append(d.sent, doc.Origin+" "+string(req))
	return []byte(`{}`), nil
}

func plToken(aud string) string {
	return "pl1.k." + base64.RawURLEncoding.EncodeToString([]byte(`{"aud":"`+aud+`"}`)) + ".s"
}

// TestGuardSendsOnlyToThePinnedDocument is the guard's part of keeping
// tools and tokens on their origin, without a browser: nothing goes out
// unpinned or after a navigation whose check failed; a token goes only to
// its audience.
func TestGuardSendsOnlyToThePinnedDocument(t *testing.T) {
	a, b := "http://a.example", "http://b.example"
	tokA := plToken(a)
	tokens := func(origin string) string {
		// A token source that wrongly offers A's token everywhere: the
		// guard still checks the audience.
		return tokA
	}
	br := &docBrowser{}
	g := NewGuard(br, tokens)
	req := []byte(`{"id":"r1","method":"invoke","session":"from-the-client","capability":"note"}`)
	ctx := context.Background()

	if _, err := g.RoundTrip(ctx, req); !errors.Is(err, agent.ErrNotSent) {
		t.Errorf("unpinned: %v, want ErrNotSent", err)
	}
	g.Pin(Document{Origin: a, Loader: "L1"})
	g.RoundTrip(ctx, req)
	g.Pin(Document{Origin: b, Loader: "L2"})
	g.RoundTrip(ctx, req)
	g.unpin(b)
	_, err := g.RoundTrip(ctx, req)
	var left *LeftSiteError
	if !errors.As(err, &left) || !strings.Contains(err.Error(), "left the allowed site: it shows "+b) {
		t.Errorf("after leaving: %v", err)
	}
	// A navigation: the request waits for the check, and goes nowhere
	// when it fails.
	g.Pin(Document{Origin: a, Loader: "L3"})
	g.navigating()
	go func() { time.Sleep(50 * time.Millisecond); g.unpin(b) }()
	if _, err := g.RoundTrip(ctx, req); !errors.Is(err, agent.ErrNotSent) {
		t.Errorf("after a navigation whose check failed: %v", err)
	}
	want := []string{
		a + ` {"capability":"note","id":"r1","method":"invoke","session":"` + tokA + `"}`,
		b + ` {"capability":"note","id":"r1","method":"invoke"}`,
	}
	if diff := cmp.Diff(want, br.sent); diff != "" {
		t.Errorf("sent (-want +got):\n%s", diff)
	}
}

// TestGuardPagePinnedForItsWebMCPToolsOnly: an allowed page without Pling
// is pinned for its own WebMCP tools (PageDocument), and no Surface
// request — nor token — goes to it; after a navigation both wait for the
// new page's check.
func TestGuardPagePinnedForItsWebMCPToolsOnly(t *testing.T) {
	a := "http://a.example"
	br := &docBrowser{}
	g := NewGuard(br, func(string) string { return plToken(a) })
	ctx := context.Background()
	if _, err := g.PageDocument(ctx); !errors.Is(err, agent.ErrNotSent) {
		t.Errorf("unpinned: PageDocument %v, want ErrNotSent", err)
	}
	doc := Document{Origin: a, Loader: "L1", Context: "c1"}
	g.pinPage(doc)
	if got, err := g.PageDocument(ctx); err != nil || got != doc {
		t.Errorf("pinned for its tools: PageDocument %+v, %v", got, err)
	}
	if _, err := g.RoundTrip(ctx, []byte(`{"id":"r1","method":"describe"}`)); !errors.Is(err, agent.ErrNotSent) {
		t.Errorf("a Surface request to a page without Pling: %v, want ErrNotSent", err)
	}
	g.navigating()
	go func() { time.Sleep(50 * time.Millisecond); g.unpin("http://b.example") }()
	if _, err := g.PageDocument(ctx); !errors.Is(err, agent.ErrNotSent) {
		t.Errorf("after a navigation whose check failed: PageDocument %v", err)
	}
	if len(br.sent) > 0 {
		t.Errorf("sent %v", br.sent)
	}
}
