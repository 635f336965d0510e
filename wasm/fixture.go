//go:build js && wasm && plingfixture

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/hack-pad/safejs"

	"github.com/pling-go/pling/internal/conform/fixture"
	"github.com/pling-go/pling/schema"
)

// setTestEntries adds the conformance entry, bridge.fixture. This file is
// built only with -tags plingfixture (make wasm's pling-conform.wasm), so
// the shipped pling.wasm carries neither the fixture pages nor their fake
// clock.
func setTestEntries(bridge safejs.Value) error {
	fx, err := newObject(fixtureAPI())
	if err != nil {
		return err
	}
	return bridge.Set("fixture", fx)
}

// The conformance entry: load a fixture page, answer requests, move the
// fake clock, read call counts — the host interface every conformance
// runner drives (docs/hosts.md §3 "One runner, many hosts"). Fixture pages run
// no JS and never wait on the event loop, so these calls are synchronous.

var fixtures = struct {
	sync.Mutex
	next  int
	pages map[int]*fixture.Page
}{pages: map[int]*fixture.Page{}}

func fixturePage(args []safejs.Value) (*fixture.Page, error) {
	id, err := argInt(args, 0)
	if err != nil {
		return nil, err
	}
	fixtures.Lock()
	defer fixtures.Unlock()
	p := fixtures.pages[id]
	if p == nil {
		return nil, fmt.Errorf("no fixture page %d", id)
	}
	return p, nil
}

// pageAndText reads the (page id, text) arguments most fixture calls take.
func pageAndText(args []safejs.Value) (*fixture.Page, string, error) {
	p, err := fixturePage(args)
	if err != nil {
		return nil, "", err
	}
	text, err := argString(args, 1)
	return p, text, err
}

func fixtureAPI() map[string]any {
	return map[string]any{
		"load": fnOf("fixture.load", func(args []safejs.Value) (any, error) {
			page, err := argString(args, 0)
			if err != nil {
				return nil, err
			}
			p, err := fixture.Load([]byte(page))
			if err != nil {
				return nil, err
			}
			fixtures.Lock()
			defer fixtures.Unlock()
			fixtures.next++
			fixtures.pages[fixtures.next] = p
			return fixtures.next, nil
		}).Value(),
		"handle": fnOf("fixture.handle", func(args []safejs.Value) (any, error) {
			p, err := fixturePage(args)
			if err != nil {
				return nil, err
			}
			// As the page's handle reads it: bytes as they are, text
			// judged by its length before it is copied.
			req, refused, err := argText(args, 1, schema.MaxRequestBytes)
			if err != nil {
				return nil, err
			}
			if refused != "" {
				return string(p.Runtime().Refuse(refused)), nil
			}
			return string(p.Handle(context.Background(), req)), nil
		}).Value(),
		"advance": fnOf("fixture.advance", func(args []safejs.Value) (any, error) {
			p, err := fixturePage(args)
			if err != nil {
				return nil, err
			}
			ms, err := argInt(args, 1)
			if err != nil {
				return nil, err
			}
			p.Advance(int64(ms))
			return true, nil
		}).Value(),
		"calls": fnOf("fixture.calls", func(args []safejs.Value) (any, error) {
			p, err := fixturePage(args)
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(p.Calls())
			return string(b), err
		}).Value(),
		"declare": fnOf("fixture.declare", func(args []safejs.Value) (any, error) {
			p, d, err := pageAndText(args)
			if err != nil {
				return nil, err
			}
			out, err := p.Declare([]byte(d))
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(out)
			return string(b), err
		}).Value(),
		"dispose": fnOf("fixture.dispose", func(args []safejs.Value) (any, error) {
			p, d, err := pageAndText(args)
			if err != nil {
				return nil, err
			}
			return true, p.Dispose([]byte(d))
		}).Value(),
		"callTool": fnOf("fixture.callTool", func(args []safejs.Value) (any, error) {
			p, d, err := pageAndText(args)
			if err != nil {
				return nil, err
			}
			var c struct{ Name, Arguments, Session string }
			if err := json.Unmarshal([]byte(d), &c); err != nil {
				return nil, err
			}
			return string(p.CallTool(context.Background(), c.Session, c.Name, c.Arguments)), nil
		}).Value(),
		"close": fnOf("fixture.close", func(args []safejs.Value) (any, error) {
			id, err := argInt(args, 0)
			if err != nil {
				return nil, err
			}
			fixtures.Lock()
			delete(fixtures.pages, id)
			fixtures.Unlock()
			return true, nil
		}).Value(),
	}
}
