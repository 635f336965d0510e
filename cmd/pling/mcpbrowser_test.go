package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	plingmcp "github.com/pling-go/pling/agent/mcp"
)

// TestLazyPageBrowserDidNotStart: when the browser never starts, a
// request through the lazy page says it was not sent (agent.ErrNotSent,
// so the client may send it again), every other use returns the start's
// error, and the page's navigation state is its zero.
func TestLazyPageBrowserDidNotStart(t *testing.T) {
	failed := errors.New("no browser here")
	l := startLazy(func() (*cdp.Page, error) { return nil, failed })
	ctx := context.Background()
	for name, send := range map[string]func() ([]byte, error){
		"RoundTrip":   func() ([]byte, error) { return l.RoundTrip(ctx, []byte(`{}`)) },
		"RoundTripTo": func() ([]byte, error) { return l.RoundTripTo(ctx, plingmcp.Document{}, []byte(`{}`)) },
	} {
		if _, err := send(); !errors.Is(err, agent.ErrNotSent) || err == nil || !strings.Contains(err.Error(), failed.Error()) {
			t.Errorf("%s: %v, want the start's error marked not sent", name, err)
		}
	}
	for name, use := range map[string]func() error{
		"Document":  func() error { _, err := l.Document(ctx); return err },
		"Info":      func() error { _, err := l.Info(ctx); return err },
		"Navigate":  func() error { _, err := l.Navigate(ctx, "/"); return err },
		"Back":      func() error { _, err := l.Back(ctx); return err },
		"Tabs":      func() error { _, err := l.Tabs(ctx); return err },
		"SwitchTab": func() error { _, err := l.SwitchTab(ctx, "t"); return err },
		"Outline":   func() error { _, err := l.Outline(ctx, 10); return err },
	} {
		if err := use(); err != failed {
			t.Errorf("%s: %v, want the start's error", name, err)
		}
	}
	if l.NavigationSeq() != 0 || l.NavigationPending() {
		t.Errorf("navigation %d %v, want 0 false", l.NavigationSeq(), l.NavigationPending())
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
