//go:build js && wasm && plingfixture

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/hack-pad/safejs"

	"github.com/pling-go/pling/internal/conform/fixture"
	"github.com/pling-go/pling/internal/pagebridge"
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

// pageCall is a fixture call whose first argument is a page id: f with
// that page and all the arguments.
func pageCall(name string, f func(p *fixture.Page, args []safejs.Value) (any, error)) safejs.Value {
	return fnOf(name, func(args []safejs.Value) (any, error) {
		p, err := fixturePage(args)
		if err != nil {
			return nil, err
		}
		return f(p, args)
	}).Value()
}

// textCall is a fixture call of the (page id, text) arguments most take: f
// with the page and the text.
func textCall(name string, f func(p *fixture.Page, text string) (any, error)) safejs.Value {
	return pageCall(name, func(p *fixture.Page, args []safejs.Value) (any, error) {
		text, err := argString(args, 1)
		if err != nil {
			return nil, err
		}
		return f(p, text)
	})
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
		"handle": pageCall("fixture.handle", func(p *fixture.Page, args []safejs.Value) (any, error) {
			// As the page's handle reads it: bytes as they are, text
			// judged by its length before it is copied.
			req, refused, err := argText(args, 1, schema.MaxRequestBytes)
			if err != nil {
				return nil, err
			}
			if refused != "" {
				return string(pagebridge.Refuse(p.Runtime(), refused)), nil
			}
			return string(p.Handle(context.Background(), req)), nil
		}),
		"advance": pageCall("fixture.advance", func(p *fixture.Page, args []safejs.Value) (any, error) {
			ms, err := argInt(args, 1)
			if err != nil {
				return nil, err
			}
			p.Advance(int64(ms))
			return true, nil
		}),
		"calls": pageCall("fixture.calls", func(p *fixture.Page, args []safejs.Value) (any, error) {
			b, err := json.Marshal(p.Calls())
			return string(b), err
		}),
		"declare": textCall("fixture.declare", func(p *fixture.Page, d string) (any, error) {
			out, err := p.Declare([]byte(d))
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(out)
			return string(b), err
		}),
		"dispose": textCall("fixture.dispose", func(p *fixture.Page, d string) (any, error) {
			return true, p.Dispose([]byte(d))
		}),
		"callTool": textCall("fixture.callTool", func(p *fixture.Page, d string) (any, error) {
			var c struct{ Name, Arguments, Session string }
			if err := json.Unmarshal([]byte(d), &c); err != nil {
				return nil, err
			}
			return string(p.CallTool(context.Background(), c.Session, c.Name, c.Arguments)), nil
		}),
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
