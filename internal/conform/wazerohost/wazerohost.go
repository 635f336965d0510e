// Package wazerohost runs the test module (pling.wasm built with -tags
// plingfixture, TestModule) inside this Go program on wazero, through our
// gojs host: Module calls its fixture entry (the conformance suite's
// wazero host drives it), and Transport is an agent-side transport that
// serves one fixture page in it, with no browser and no JavaScript engine.
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
)

// Transport serves one fixture page in pling.wasm on wazero. It implements
// agent.Transport and io.Closer.
type Transport struct {
	m    *Module
	page float64 // the fixture entry's page id; 0 once closed
	mu   sync.Mutex
	last time.Time
}

// Open starts the test module found in dist (the directory with TestModule) and
// loads the fixture page (docs/protocol.md §7.1) into it. Compiled code is cached
// under the user's cache directory, so a second Open starts fast.
func Open(ctx context.Context, dist string, page []byte) (*Transport, error) {
	if !json.Valid(page) {
		return nil, fmt.Errorf("wazerohost: the fixture page is not JSON")
	}
	cache := ""
	if d, err := os.UserCacheDir(); err == nil {
		cache = filepath.Join(d, "pling", "wazero")
	}
	m := &Module{Dist: dist, CacheDir: cache}
	id, err := m.Call(ctx, "load", string(page))
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("wazerohost: %w", err)
	}
	n, ok := id.(float64)
	if !ok || n <= 0 {
		m.Close()
		return nil, fmt.Errorf("wazerohost: fixture.load returned %v", id)
	}
	return &Transport{m: m, page: n, last: time.Now()}, nil
}

// RoundTrip implements agent.Transport.
func (t *Transport) RoundTrip(ctx context.Context, request []byte) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.page == 0 {
		return nil, fmt.Errorf("wazerohost: closed")
	}
	// A fixture page runs on a fake clock from 0; here it follows the wall
	// clock, so rate-limit windows refill while an agent waits.
	now := time.Now()
	if ms := now.Sub(t.last).Milliseconds(); ms > 0 {
		if _, err := t.m.Call(ctx, "advance", t.page, ms); err != nil {
			return nil, err
		}
		t.last = t.last.Add(time.Duration(ms) * time.Millisecond)
	}
	if request == nil {
		request = []byte{}
	}
	out, err := t.m.Call(ctx, "handle", t.page, request) // bytes, as a page's handle reads them
	if err != nil {
		return nil, err
	}
	s, ok := out.(string)
	if !ok {
		return nil, fmt.Errorf("wazerohost: fixture.handle returned %v", out)
	}
	return []byte(s), nil
}

// Advance moves the fixture page's fake clock further than the wall clock
// has (to expire a session in a test, say).
func (t *Transport) Advance(ctx context.Context, ms int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.page == 0 {
		return fmt.Errorf("wazerohost: closed")
	}
	_, err := t.m.Call(ctx, "advance", t.page, ms)
	return err
}

// Close stops the module.
func (t *Transport) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.page == 0 {
		return nil
	}
	t.m.Call(context.Background(), "close", t.page)
	t.page = 0
	return t.m.Close()
}
