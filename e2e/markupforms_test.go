package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/schema"
)

// formsPage is a settings form as sites write it: every input prefilled
// and required, a radio group in a fieldset, a <select> inside its
// <label> whose options show names, and a minlength.
const formsPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Help desk settings</title>
<script src="/pling/pling.js" data-expose="*"></script></head><body>
<form id="f" data-pling-action="settings.save" data-pling-title="Save settings"
      data-pling-expect-state="settings.saved"
      onsubmit="event.preventDefault(); saved.textContent = [this.name.value, this.slaHours.value, this.assignee.value, this.priority.value].join('|')">
  <label>Desk name <input name="name" value="Support" required minlength="3" data-pling-param></label>
  <label>SLA hours <input name="slaHours" type="number" step="1" min="1" value="24" required data-pling-param></label>
  <label>Default assignee
    <select name="assignee" data-pling-param><option value="alice">Alice</option><option value="bob" selected>Bob</option><option value="carol">Carol</option></select>
  </label>
  <fieldset><legend>Default priority</legend>
    <label><input type="radio" name="priority" value="low" required data-pling-param> Low</label>
    <label><input type="radio" name="priority" value="normal" checked required data-pling-param> Normal</label>
    <label><input type="radio" name="priority" value="high" required data-pling-param> High</label>
  </fieldset>
  <fieldset><legend>Escalation</legend>
    <label><input type="radio" name="escalate" value="never" required data-pling-param> Never</label>
    <label><input type="radio" name="escalate" value="manager" required data-pling-param> To a manager</label>
  </fieldset>
  <button>Save</button>
</form>
<output id="saved" data-pling-state="settings.saved"></output>
</body></html>`

// openHTML serves one page at path on a browser site and opens it in
// Chromium (skipped in -short mode).
func openHTML(t *testing.T, path, page string) *tab {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium: not in -short mode")
	}
	return openTestPage(t, path, page)
}

// TestMarkupForms: a prefilled form changes one field in one call, and
// the others keep the page's values; a radio group is
// one param with an enum, described by its legend, and filling it checks
// the radio without rewriting values; a <select>'s options show
// their texts and its <label> gives only its own words; minlength carries
// over.
func TestMarkupForms(t *testing.T) {
	tb := openHTML(t, "/test/forms.html", formsPage)
	desc := tb.describeUntil("settings.save", func(d *schema.SurfaceDescription) bool { return capability(d, "settings.save") != nil })
	save := mustCapability(t, desc, "settings.save")
	props := save.InputSchema.Properties

	t.Run("prefilled fields are optional with their values as defaults", func(t *testing.T) {
		if diff := cmp.Diff([]string{"escalate"}, save.InputSchema.Required); diff != "" {
			t.Errorf("required (-want +got):\n%s", diff)
		}
		got := map[string]string{}
		for _, n := range []string{"name", "slaHours", "assignee", "priority", "escalate"} {
			if props[n] != nil && props[n].Default != nil {
				got[n] = fmt.Sprint(props[n].Default)
			}
		}
		want := map[string]string{"name": "Support", "slaHours": "24", "assignee": "bob", "priority": "normal"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("defaults (-want +got):\n%s", diff)
		}
	})
	t.Run("minlength", func(t *testing.T) {
		if p := props["name"]; p == nil || p.MinLength == nil || *p.MinLength != 3 {
			t.Errorf("name: %+v, want minLength 3", p)
		}
	})
	t.Run("select: label without the options, enum with the texts", func(t *testing.T) {
		p := props["assignee"]
		if p == nil || !slices.Equal(p.Enum, []any{"alice", "bob", "carol"}) {
			t.Fatalf("assignee: %+v", p)
		}
		want := `Default assignee. Options: "alice" (Alice), "bob" (Bob), "carol" (Carol)`
		if p.Description != want {
			t.Errorf("assignee description %q, want %q", p.Description, want)
		}
	})
	t.Run("radio group: one param with an enum, described by its legend", func(t *testing.T) {
		p := props["priority"]
		if p == nil || !slices.Equal(p.Enum, []any{"low", "normal", "high"}) {
			t.Fatalf("priority: %+v", p)
		}
		if !strings.HasPrefix(p.Description, "Default priority. Options: ") || !strings.Contains(p.Description, `"high" (High)`) {
			t.Errorf("priority description %q", p.Description)
		}
	})
	t.Run("one field changes in one call; the rest keep the page's values", func(t *testing.T) {
		tb := tb.on(t)
		r := tb.mustInvoke("settings.save", map[string]any{"slaHours": 48, "escalate": "manager"})
		expectationsMet(t, r, "settings.saved")
		if got := eval[string](tb, `saved.textContent`); got != "Support|48|bob|normal" {
			t.Errorf("saved %q, want Support|48|bob|normal", got)
		}
		got := eval[[]string](tb, `[...document.querySelectorAll("input[type=radio]")].map(i => i.value + (i.checked ? "*" : ""))`)
		if diff := cmp.Diff([]string{"low", "normal*", "high", "never", "manager*"}, got); diff != "" {
			t.Errorf("radios (-want +got):\n%s", diff)
		}
	})
	t.Run("a radio group is filled by checking the radio", func(t *testing.T) {
		tb := tb.on(t)
		tb.mustInvoke("settings.save", map[string]any{"priority": "high", "escalate": "never"})
		if got := eval[string](tb, `saved.textContent`); got != "Support|48|bob|high" {
			t.Errorf("saved %q, want Support|48|bob|high", got)
		}
	})
}
