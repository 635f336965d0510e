package e2e

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/agent"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/schema"
)

// validityPage is a form with a pattern and its title (the HTML hint for
// it), and a field the page checks itself: its input listener sets a
// custom validity message, the message a person would see. Its submit
// handler refuses the code ZZ9 by naming the reference field, as a page
// whose check runs at submit does.
var validityPage = plingPage("Tags", `<form id="f" data-pling-action="tag.add" data-pling-title="Add a tag"
      data-pling-expect-state="tag.saved"
      onsubmit="event.preventDefault(); if (this.code.value === 'ZZ9') this.ref.setCustomValidity('That reference is closed'); else saved.textContent = this.code.value + '|' + this.ref.value">
  <label>Tag code <input name="code" required pattern="[A-Z]{2}[0-9]+" title="Two capital letters, then digits" data-pling-param></label>
  <label>Reference <input name="ref" required data-pling-param
    oninput="this.setCustomValidity(this.value.startsWith('T-') ? '' : 'A reference starts with T-, as on the ticket')"></label>
  <button>Add</button>
</form>
<output id="saved" data-pling-state="tag.saved"></output>`)

// TestMarkupFormValidation: a pattern violation names the pattern and
// the control's title, its hint; a submit the page's own check blocks,
// or its submit handler refuses by naming a field, answers
// INVALID_PARAMS at the param's path with the page's message, nothing is
// submitted, and the person's values are back.
func TestMarkupFormValidation(t *testing.T) {
	tb := openHTML(t, "/test/validity.html", validityPage)
	desc := tb.describeUntil("tag.add", func(d *schema.SurfaceDescription) bool { return capability(d, "tag.add") != nil })
	code := mustCapability(t, desc, "tag.add").InputSchema.Properties["code"]

	t.Run("the title is the param's hint", func(t *testing.T) {
		if code == nil || code.Description != "Tag code. Two capital letters, then digits" {
			t.Errorf("code: %+v, want the label and the title as its description", code)
		}
	})
	t.Run("a pattern violation names the pattern and the hint", func(t *testing.T) {
		_, err := tb.on(t).invoke("tag.add", map[string]any{"code": "ab1", "ref": "T-1"})
		be := wantCode(t, err, perr.InvalidParams)
		want := []violation{{Path: "/code",
			Reason: `does not match the pattern "^(?:[A-Z]{2}[0-9]+)$"; the parameter says "Tag code. Two capital letters, then digits"`}}
		if diff := cmp.Diff(want, violations(t, be)); diff != "" {
			t.Errorf("violations (-want +got):\n%s", diff)
		}
	})
	t.Run("the page's own message when its check blocks the submit", func(t *testing.T) {
		tb := tb.on(t)
		_, err := tb.invoke("tag.add", map[string]any{"code": "AB1", "ref": "X-9"})
		be := wantCode(t, err, perr.InvalidParams)
		want := []violation{{Path: "/ref", Reason: `is not valid: the page says "A reference starts with T-, as on the ticket"`}}
		if diff := cmp.Diff(want, violations(t, be)); diff != "" {
			t.Errorf("violations (-want +got):\n%s", diff)
		}
		if got := eval[string](tb, `saved.textContent`); got != "" {
			t.Errorf("saved %q: the form was submitted", got)
		}
	})
	t.Run("a refused call leaves the person's values", func(t *testing.T) {
		tb := tb.on(t)
		eval[bool](tb, `f.code.value = "CD7", f.ref.value = "T-5", true`)
		_, err := tb.invoke("tag.add", map[string]any{"code": "AB1", "ref": "X-9"})
		wantCode(t, err, perr.InvalidParams)
		if got := eval[string](tb, `f.code.value + "|" + f.ref.value + "|" + f.ref.validationMessage`); got != "CD7|T-5|" {
			t.Errorf("after the refused call the form holds %q, want the person's CD7|T-5, valid", got)
		}
	})
	t.Run("the page names a field in its submit handler", func(t *testing.T) {
		tb := tb.on(t)
		eval[bool](tb, `f.code.value = "CD7", f.ref.value = "T-5", true`)
		_, err := tb.invoke("tag.add", map[string]any{"code": "ZZ9", "ref": "T-1"})
		be := wantCode(t, err, perr.InvalidParams)
		want := []violation{{Path: "/ref", Reason: `is not valid: the page says "That reference is closed"`}}
		if diff := cmp.Diff(want, violations(t, be)); diff != "" {
			t.Errorf("violations (-want +got):\n%s", diff)
		}
		if got := eval[string](tb, `f.code.value + "|" + f.ref.value + "|" + f.ref.validationMessage + "|" + saved.textContent`); got != "CD7|T-5||" {
			t.Errorf("after the refused call the form holds %q, want the person's CD7|T-5, valid, nothing saved", got)
		}
	})
	t.Run("a valid input is submitted", func(t *testing.T) {
		tb := tb.on(t)
		r := tb.mustInvoke("tag.add", map[string]any{"code": "AB12", "ref": "T-9"})
		expectationsMet(t, r, "tag.saved")
		if got := eval[string](tb, `saved.textContent`); got != "AB12|T-9" {
			t.Errorf("saved %q, want AB12|T-9", got)
		}
	})
}

// violation is one entry of an INVALID_PARAMS failure's
// details.violations, as the wire carries it (docs/protocol.md).
type violation struct{ Path, Reason string }

// violations reads a business failure's details.violations.
func violations(t *testing.T, be *agent.BusinessError) []violation {
	t.Helper()
	list, _ := be.Details["violations"].([]any)
	var vs []violation
	for _, x := range list {
		m, _ := x.(map[string]any)
		p, _ := m["path"].(string)
		r, _ := m["reason"].(string)
		vs = append(vs, violation{Path: p, Reason: r})
	}
	if len(vs) == 0 {
		t.Errorf("no violations in %v", be.Details)
	}
	return vs
}

// numberPage has number inputs with and without a step and a min.
var numberPage = plingPage("Numbers", `<form data-pling-action="party.book" data-pling-title="Book a party">
  <label>Guests <input name="guests" type="number" min="1" data-pling-param></label>
  <label>Hours <input name="hours" type="number" step="0.5" data-pling-param></label>
  <label>Offset <input name="offset" type="number" min="0.5" data-pling-param></label>
  <label>Level <input name="level" type="range" data-pling-param></label>
  <label>Weight <input name="weight" type="number" step="any" data-pling-param></label>
  <button>Book</button>
</form>`)

// TestMarkupNumberTypes: a number input's step is 1 unless it says
// otherwise, counted from its min, so one without a step takes whole
// numbers (integer); a fractional step or min, or step=any, takes any.
func TestMarkupNumberTypes(t *testing.T) {
	tb := openHTML(t, "/test/numbers.html", numberPage)
	desc := tb.describeUntil("party.book", func(d *schema.SurfaceDescription) bool { return capability(d, "party.book") != nil })
	got := map[string]string{}
	for name, p := range mustCapability(t, desc, "party.book").InputSchema.Properties {
		got[name] = p.Type
	}
	want := map[string]string{"guests": "integer", "hours": "number", "offset": "number", "level": "integer", "weight": "number"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("types (-want +got):\n%s", diff)
	}
}
