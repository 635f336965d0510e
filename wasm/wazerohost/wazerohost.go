// Package wazerohost is the agent-side transport to pling.wasm running inside
// this Go program on wazero (our gojs host): the same module a browser
// loads, serving a fixture page, with no browser and no JavaScript engine.
// It suits tests and tools that want the real module's answers in process.
package wazerohost

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pling-go/pling/e2e/conform"
)

// Transport serves one fixture page in pling.wasm on wazero. It implements
// agent.Transport and io.Closer.
type Transport struct {
	host *conform.Wazero
	page conform.Page
	mu   sync.Mutex
	last time.Time
}

// Open starts the module found in dist (the directory with pling.wasm) and
// loads the fixture page (PLING.md §7.1) into it. Compiled code is cached
// under the user's cache directory, so a second Open starts fast.
func Open(ctx context.Context, dist string, page []byte) (*Transport, error) {
	if !json.Valid(page) {
		return nil, fmt.Errorf("wazerohost: the fixture page is not JSON")
	}
	cache := ""
	if d, err := os.UserCacheDir(); err == nil {
		cache = filepath.Join(d, "pling", "wazero")
	}
	h := &conform.Wazero{Dist: dist, CacheDir: cache}
	p, err := h.Load(ctx, page)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("wazerohost: %w", err)
	}
	return &Transport{host: h, page: p, last: time.Now()}, nil
}

// RoundTrip implements agent.Transport.
func (t *Transport) RoundTrip(ctx context.Context, request []byte) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.page == nil {
		return nil, fmt.Errorf("wazerohost: closed")
	}
	// A fixture page runs on a fake clock from 0; here it follows the wall
	// clock, so rate-limit windows refill while an agent waits.
	now := time.Now()
	if ms := now.Sub(t.last).Milliseconds(); ms > 0 {
		if err := t.page.Advance(ctx, ms); err != nil {
			return nil, err
		}
		t.last = t.last.Add(time.Duration(ms) * time.Millisecond)
	}
	return t.page.Handle(ctx, request)
}

// Advance moves the fixture page's fake clock further than the wall clock
// has (to expire a session in a test, say).
func (t *Transport) Advance(ctx context.Context, ms int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.page.Advance(ctx, ms)
}

// Close stops the module.
func (t *Transport) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.page == nil {
		return nil
	}
	t.page.Close()
	t.page = nil
	return t.host.Close()
}
