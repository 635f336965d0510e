//go:build js && wasm

// Reading the arguments of a call from JS: strings (bounded, well-formed UTF-16) and integers.

package main

import (
	"fmt"
	"strings"

	"github.com/hack-pad/safejs"
	"github.com/pling-go/pling/internal/wire"
)

func argString(args []safejs.Value, i int) (string, error) {
	if i >= len(args) || args[i].Type() != safejs.TypeString {
		return "", fmt.Errorf("argument %d must be a string", i+1)
	}
	return args[i].String()
}

// argText reads argument i, request text: a JS string, or a Uint8Array
// of the text's exact bytes, copied as they are (so that bytes that are
// not UTF-8 reach the runtime unchanged, as on a Go host). Text whose
// length alone shows it to be longer than max — a Uint8Array's length, or
// a string's UTF-16 length, which its UTF-8 never undercuts — is not
// copied: refused is wire.ReasonTooLarge. A string with a lone surrogate
// has no UTF-8 form, and syscall/js would write U+FFFD in its place:
// refused is wire.ReasonInvalidUTF8, as the runtime refuses bytes that
// are not UTF-8 (unless the text is too large, which the runtime checks
// first).
func argText(args []safejs.Value, i, max int) (text []byte, refused string, err error) {
	if i >= len(args) {
		return nil, "", fmt.Errorf("argument %d must be a string or a Uint8Array", i+1)
	}
	v := args[i]
	switch v.Type() {
	case safejs.TypeString:
		if stringLength(v) > max {
			return nil, wire.ReasonTooLarge, nil
		}
		s, err := v.String()
		if err != nil {
			return nil, "", err
		}
		if len(s) <= max && strings.Contains(s, "\uFFFD") && !wellFormed(v) {
			return nil, wire.ReasonInvalidUTF8, nil
		}
		return []byte(s), "", nil
	case safejs.TypeObject:
		if jsUint8Array.Type() != safejs.TypeFunction {
			break
		}
		if is, err := v.InstanceOf(jsUint8Array); err != nil || !is {
			break
		}
		n, err := v.Length()
		if err != nil {
			return nil, "", err
		}
		if n > max {
			return nil, wire.ReasonTooLarge, nil
		}
		b := make([]byte, n)
		if _, err := safejs.CopyBytesToGo(b, v); err != nil {
			return nil, "", err
		}
		return b, "", nil
	}
	return nil, "", fmt.Errorf("argument %d must be a string or a Uint8Array", i+1)
}

// argStringMax is argString for text the runtime limits to max bytes: a
// string longer than that by its UTF-16 length is not copied (tooLarge).
func argStringMax(args []safejs.Value, i, max int) (s string, tooLarge bool, err error) {
	if i < len(args) && args[i].Type() == safejs.TypeString && stringLength(args[i]) > max {
		return "", true, nil
	}
	s, err = argString(args, i)
	return s, false, err
}

// stringLength is the UTF-16 length of the JS string s, read in one call
// without copying s; -1 where the host lacks String.prototype.lastIndexOf
// (a Go host, whose strings are not copied as UTF-16 anyway).
func stringLength(s safejs.Value) int {
	if jsLastIndexOf.Type() != safejs.TypeFunction {
		return -1
	}
	n, err := jsLastIndexOf.Call("call", s, "")
	if err != nil || n.Type() != safejs.TypeNumber {
		return -1
	}
	i, _ := n.Int()
	return i
}

// wellFormed reports whether the JS string s is well-formed UTF-16 (no
// lone surrogate). A host with neither isWellFormed nor
// encodeURIComponent (a Go host, whose strings are bytes) has no lone
// surrogates to find.
func wellFormed(s safejs.Value) bool {
	if jsIsWellFormed.Type() == safejs.TypeFunction {
		ok, err := jsIsWellFormed.Call("call", s)
		if err != nil {
			return false
		}
		b, _ := ok.Bool()
		return b
	}
	if jsEncodeURIComponent.Type() == safejs.TypeFunction {
		_, err := jsEncodeURIComponent.Invoke(s)
		return err == nil
	}
	return true
}

func argInt(args []safejs.Value, i int) (int, error) {
	if i >= len(args) || args[i].Type() != safejs.TypeNumber {
		return 0, fmt.Errorf("argument %d must be a number", i+1)
	}
	return args[i].Int()
}
