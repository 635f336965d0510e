//go:build js && wasm

// The page reader: the page (URL, title) and feedback hooks, read as JSON on every invoke.

package main

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/hack-pad/safejs"

	"github.com/pling-go/pling/schema"
	"github.com/pling-go/pling/wasm/internal/jsonmap"
)

// hookReader reads what a page hook (page, feedback) returns, as JSON. The
// runtime reads both hooks before and after every invoke, so this is on
// the invoke path, and each JS value or string that crosses costs: where
// JSON.stringify honours toJSON, as every JS engine does,
// JSON.stringify({toJSON: hook}) calls the hook and serializes its value in
// one call into JS; and text equal to the last read (the page rarely
// changes between reads) is recognised (sameText) instead of being copied
// into Go again.
type hookReader struct {
	fn     safejs.Value
	holder safejs.Value // {toJSON: fn bound to undefined}, or undefined

	mu   sync.Mutex
	last safejs.Value // the last text read, a JS string, or undefined
	text string       // its copy in Go
}

func newHookReader(fn safejs.Value) *hookReader {
	r := &hookReader{fn: fn, holder: safejs.Undefined(), last: safejs.Undefined()}
	if !stringifyCallsToJSON() {
		return r
	}
	// Bound, the hook runs with the this it has when called directly.
	bound, err := fn.Call("bind", safejs.Undefined())
	if err != nil || bound.Type() != safejs.TypeFunction {
		return r
	}
	if h, err := newObject(map[string]any{"toJSON": bound}); err == nil {
		r.holder = h
	}
	return r
}

// stringifyCallsToJSON reports whether this host's JSON.stringify calls a
// toJSON method (a Go host's JSON may not).
var stringifyCallsToJSON = sync.OnceValue(func() bool {
	probe, err := safejs.FuncOf(func(safejs.Value, []safejs.Value) any { return "ok" })
	if err != nil {
		return false
	}
	defer probe.Release()
	h, err := newObject(map[string]any{"toJSON": probe.Value()})
	if err != nil {
		return false
	}
	s, err := jsStringify.Invoke(h)
	if err != nil || s.Type() != safejs.TypeString {
		return false
	}
	text, _ := s.String()
	return text == `"ok"`
})

// readInto calls the hook with no arguments and decodes its JSON.
func (r *hookReader) readInto(dst any) {
	var s safejs.Value
	if r.holder.Type() == safejs.TypeObject {
		var err error
		if s, err = jsStringify.Invoke(r.holder); err != nil {
			return
		}
	} else {
		v, err := r.fn.Invoke()
		if err != nil {
			return
		}
		if s, err = jsStringify.Invoke(v); err != nil {
			return
		}
	}
	if s.Type() != safejs.TypeString {
		return
	}
	decodeHookText(r.textOf(s), dst)
}

// decodeHookText decodes a hook's JSON text into dst as json.Unmarshal
// would, the usual values (a plain page, no feedback) without reflection.
func decodeHookText(text string, dst any) {
	switch d := dst.(type) {
	case *schema.PageInfo:
		if decodePageInfo(text, d) {
			return
		}
	case *[]schema.Feedback:
		if text == "[]" {
			*d = []schema.Feedback{}
			return
		}
	}
	_ = json.Unmarshal([]byte(text), dst)
}

// pageReader returns the runtime's page reader (runtime.WithPage) over the
// page and feedback hooks, either of which may be nil: both together
// through a pairReader where it can, else each that is set; nil if neither
// is.
func pageReader(fb, page *hookReader) func(context.Context) (schema.PageInfo, []schema.Feedback) {
	if pr := newPairReader(fb, page); pr != nil {
		return pr.read
	}
	if fb == nil && page == nil {
		return nil
	}
	return func(context.Context) (schema.PageInfo, []schema.Feedback) {
		var p schema.PageInfo
		var f []schema.Feedback
		if fb != nil {
			fb.readInto(&f)
		}
		if page != nil {
			page.readInto(&p)
		}
		return p, f
	}
}

// pairReader reads the feedback and page hooks together, where the runtime
// reads them both (runtime.WithPage): one
// JSON.stringify([feedbackHolder, pageHolder]) calls both, in that order,
// and serializes their values, one call into JS instead of two. Each hook
// then gets its index, "0" or "1", as toJSON's argument where a holder of
// its own passes "". Text equal to the last read (sameText) is not copied
// again, and its decoded values are given again; they are only read. A read that
// throws reads the two hooks apart instead, so that one failing hook does
// not hide the other's value.
type pairReader struct {
	fb, page *hookReader
	holder   safejs.Value // [fb.holder, page.holder]

	mu   sync.Mutex
	last safejs.Value // the last text read, a JS string, or undefined
	fbv  []schema.Feedback
	pgv  schema.PageInfo
}

// newPairReader returns nil where the two cannot be read together: a hook
// is missing, or the host's JSON.stringify does not call toJSON.
func newPairReader(fb, page *hookReader) *pairReader {
	if fb == nil || page == nil || fb.holder.Type() != safejs.TypeObject || page.holder.Type() != safejs.TypeObject {
		return nil
	}
	arr, err := jsParse.Invoke("[0,0]")
	if err != nil || arr.SetIndex(0, fb.holder) != nil || arr.SetIndex(1, page.holder) != nil {
		return nil
	}
	return &pairReader{fb: fb, page: page, holder: arr, last: safejs.Undefined()}
}

func (r *pairReader) read(context.Context) (schema.PageInfo, []schema.Feedback) {
	s, err := jsStringify.Invoke(r.holder)
	if err == nil && s.Type() == safejs.TypeString {
		r.mu.Lock()
		if sameText(r.last, s) {
			fb, p := r.fbv, r.pgv
			r.mu.Unlock()
			return p, fb
		}
		r.mu.Unlock()
		if text, err := s.String(); err == nil {
			if a, b, ok := splitPair(text); ok {
				var fb []schema.Feedback
				var p schema.PageInfo
				decodeHookText(a, &fb)
				decodeHookText(b, &p)
				r.mu.Lock()
				r.last, r.fbv, r.pgv = s, fb, p
				r.mu.Unlock()
				return p, fb
			}
		}
	}
	var fb []schema.Feedback
	var p schema.PageInfo
	r.fb.readInto(&fb)
	r.page.readInto(&p)
	return p, fb
}

// splitPair splits JSON.stringify's text of a two-element array, [a,b]
// (no whitespace), into the texts of a and b.
func splitPair(text string) (a, b string, ok bool) {
	if len(text) < 5 || text[0] != '[' || text[len(text)-1] != ']' {
		return "", "", false
	}
	depth, inString := 0, false
	for i := 1; i < len(text)-1; i++ {
		c := text[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth == 0 {
				return text[1:i], text[i+1 : len(text)-1], true
			}
		}
	}
	return "", "", false
}

// textOf gives the Go text of the JS string s, copied only if it differs
// from the last one.
func (r *hookReader) textOf(s safejs.Value) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sameText(r.last, s) {
		return r.text
	}
	text, err := s.String()
	if err != nil {
		return ""
	}
	r.last, r.text = s, text
	return text
}

// decodePageInfo decodes what JSON.stringify makes of the usual page hook
// value, {"url":"…","title":"…"} with plain strings, as json.Unmarshal
// would, without reflection. Anything else (another key, an escape, a
// non-string) is left to json.Unmarshal: it reports false and leaves p.
func decodePageInfo(text string, p *schema.PageInfo) bool {
	var out schema.PageInfo
	if len(text) < 2 || text[0] != '{' {
		return false
	}
	i := 1
	if text[i] == '}' {
		i++
	} else {
		for {
			key, j, ok := jsonmap.PlainString(text, i)
			if !ok || j >= len(text) || text[j] != ':' {
				return false
			}
			val, k, ok := jsonmap.PlainString(text, j+1)
			if !ok || k >= len(text) {
				return false
			}
			switch key {
			case "url":
				out.URL = val
			case "title":
				out.Title = val
			default:
				return false
			}
			i = k + 1
			if text[k] == '}' {
				break
			}
			if text[k] != ',' {
				return false
			}
		}
	}
	if i != len(text) {
		return false
	}
	*p = out
	return true
}
