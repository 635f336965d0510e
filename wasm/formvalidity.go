//go:build js && wasm

// A markup form that the browser's constraint validation blocked: the page's own message for each invalid field.

package main

import (
	"github.com/hack-pad/safejs"

	"github.com/pling-go/pling/internal/pagebridge"
)

// maxFormControls bounds the controls of one form looked at.
const maxFormControls = 500

// formRefused reads the failure pling.js gives for a markup form whose
// submit the browser's constraint validation would block
// (pling.fail("INVALID_PARAMS", "", form), or the copy of the form's
// invalid controls pling.js takes before it gives the fields back the
// person's values, shaped as the form): each invalid control's param
// name and validationMessage, the page's setCustomValidity text or the
// browser's, in document order (pagebridge.FormRefused). ok is false when
// details is not a <form>.
func formRefused(form safejs.Value) (error, bool) {
	if tag, err := form.Get("tagName"); err != nil || tag.Type() != safejs.TypeString {
		return nil, false
	} else if s, _ := tag.String(); s != "FORM" {
		return nil, false
	}
	els, err := form.Get("elements")
	if err != nil || els.Type() != safejs.TypeObject {
		return nil, false
	}
	n := 0
	if l, err := els.Get("length"); err == nil && l.Type() == safejs.TypeNumber {
		n, _ = l.Int()
	}
	var fields []pagebridge.FormField
	for i := 0; i < n && i < maxFormControls; i++ {
		el, err := els.Index(i)
		if err != nil || el.Type() != safejs.TypeObject || valid(el) {
			continue
		}
		name := jsText(el.Call("getAttribute", "data-pling-param"))
		if name == "" {
			name = jsText(el.Get("name"))
		}
		fields = append(fields, pagebridge.FormField{Name: name, Message: jsText(el.Get("validationMessage"))})
	}
	return pagebridge.FormRefused(fields), true
}

// valid reports el.validity.valid; a control that is not validated
// (willValidate false: a <fieldset>, a button, a disabled field) or has
// no validity is valid.
func valid(el safejs.Value) bool {
	if w, err := el.Get("willValidate"); err == nil && w.Type() == safejs.TypeBoolean {
		if b, _ := w.Bool(); !b {
			return true
		}
	}
	v, err := el.Get("validity")
	if err != nil || v.Type() != safejs.TypeObject {
		return true
	}
	ok, err := v.Get("valid")
	if err != nil || ok.Type() != safejs.TypeBoolean {
		return true
	}
	b, _ := ok.Bool()
	return b
}

// jsText is a JS string, its first 1,000 UTF-16 units only (a page's
// text is bounded before it is copied), or "" for anything else.
func jsText(v safejs.Value, err error) string {
	if err != nil || v.Type() != safejs.TypeString {
		return ""
	}
	if c, err := v.Call("slice", 0, 1000); err == nil && c.Type() == safejs.TypeString {
		v = c
	}
	s, _ := v.String()
	return s
}
