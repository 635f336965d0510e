package jsonvalue

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// reference parses with encoding/json (UseNumber) and reports duplicate
// keys and depth the way parseJSON must.
func reference(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errSyntax
	}
	if dec.More() || dec.InputOffset() != int64(len(bytes.TrimRight(data, " \t\r\n"))) {
		return nil, ErrTrailing
	}
	return v, nil
}

func depthAndDups(data []byte) (depth int, dup bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		keys  map[string]bool
		isObj bool
		key   bool
	}
	var stack []frame
	d := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return depth, dup
		}
		switch x := t.(type) {
		case json.Delim:
			switch x {
			case '{', '[':
				d++
				depth = max(depth, d)
				stack = append(stack, frame{keys: map[string]bool{}, isObj: x == '{', key: x == '{'})
				continue
			default:
				d--
				stack = stack[:len(stack)-1]
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].isObj && stack[n-1].key {
				if stack[n-1].keys[x] {
					dup = true
				}
				stack[n-1].keys[x] = true
				stack[n-1].key = false
				continue
			}
		}
		if n := len(stack); n > 0 && stack[n-1].isObj {
			stack[n-1].key = true
		}
	}
}

// requestDepth is the nesting a request may have (schema.MaxDepth, which
// this package sits below).
const requestDepth = 64

// parseJSON parses as the request decoder does.
func parseJSON(data []byte) (any, error) { return Parse(data, requestDepth) }

// FuzzParse checks parseJSON against encoding/json on valid UTF-8 text:
// the same values where both accept, refusal where encoding/json refuses,
// and duplicate keys and excess depth refused.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":1}`, `{"a":[1,2,{"b":null}],"c":"x\u00e9\ud83d\ude00"}`, `1e999`, `-0.5E+3`, `"\ud800"`,
		`{"a":1,"a":2}`, `[1,]`, `{"a" 1}`, `01`, `"\x01"`, ` {"a" : true } `, `{"a":1} x`, `[[[[[[]]]]]]`,
		`"\u12"`, `{"\u0061":1,"a":2}`, `[1 2]`, `nul`, `-`, `1.`, `.5`, `"a\/b"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) {
			return
		}
		got, err := parseJSON(data)
		want, werr := reference(data)
		depth, dup := depthAndDups(data)
		switch {
		case werr != nil:
			if err == nil {
				t.Fatalf("parseJSON accepted %q, encoding/json refused it (%v)", data, werr)
			}
		case dup:
			if !errors.Is(err, ErrDuplicateKey) && !errors.Is(err, ErrTooDeep) {
				t.Fatalf("parseJSON(%q) = %v, want a duplicate-key error", data, err)
			}
		case depth > requestDepth:
			if !errors.Is(err, ErrTooDeep) {
				t.Fatalf("parseJSON(%q) = %v, want too deep", data, err)
			}
		default:
			if err != nil {
				t.Fatalf("parseJSON(%q): %v; encoding/json accepted it", data, err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("parseJSON(%q) differs from encoding/json (-want +got):\n%s", data, d)
			}
		}
	})
}

// TestPlain8 checks the eight-bytes-at-a-time scan against the byte-wise
// definition: every byte value at every position, among plain and
// non-ASCII neighbours.
func TestPlain8(t *testing.T) {
	plain := func(b byte) bool { return b != '"' && b != '\\' && b >= 0x20 }
	for _, filler := range []byte{'a', 0x20, 0x7f, 0x80, 0xff, 0x21, 0x5d} {
		for pos := 0; pos < 8; pos++ {
			for v := 0; v < 256; v++ {
				var w [8]byte
				for i := range w {
					w[i] = filler
				}
				w[pos] = byte(v)
				want := true
				for _, b := range w {
					want = want && plain(b)
				}
				if got := plain8(binary.LittleEndian.Uint64(w[:])); got != want {
					t.Fatalf("plain8(%q) = %v, want %v", w, got, want)
				}
			}
		}
	}
}
