package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/internal/testing/require"
)

// TestChangeMark: the mark stays where it is while the page changes
// nothing, moves when its DOM changes (by its own script) and when a
// person types, and when the page's script sets a value in a form it
// declares (a prefill from its own fetch: no event, no mutation), and is
// another mark on another document — also one the page's script wrote a
// copy of the watch into, which lives in the isolated world only.
func TestChangeMark(t *testing.T) {
	ctx, p, hs := pageServing(t, `<!doctype html><title>t</title><input id="q"><p id="out">0</p>
<form data-pling-action="save"><input name="email" data-pling-param></form>
<script>globalThis.__plingChanges = { id: "fake", n: 0 };</script>`)
	mark := func() string {
		t.Helper()
		m, err := p.ChangeMark(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	first := mark()
	for i := 0; i < 3; i++ {
		time.Sleep(50 * time.Millisecond)
		if m := mark(); m != first {
			t.Fatalf("the mark moved on a page that changed nothing: %q, then %q", first, m)
		}
	}
	if _, err := p.Info(ctx); err != nil { // a look at the page changes nothing
		t.Fatal(err)
	}
	if m := mark(); m != first {
		t.Errorf("the mark moved after Info: %q, then %q", first, m)
	}
	if _, err := chromedp.Run(p.Context(), chromedp.Evaluate[string](`document.getElementById("out").textContent = "1"`)); err != nil {
		t.Fatal(err)
	}
	second := mark()
	if second == first {
		t.Errorf("the mark did not move when the page changed its DOM")
	}
	// Typing changes the input's value, not its DOM: only the input
	// event says so. (The focus itself changes nothing either.)
	if _, err := chromedp.Run(p.Context(), chromedp.Evaluate[bool](`document.getElementById("q").focus(), true`)); err != nil {
		t.Fatal(err)
	}
	if m := mark(); m != second {
		t.Errorf("the mark moved on a focus: %q, then %q", second, m)
	}
	if _, err := chromedp.Call(p.Context(), input.InsertText, input.InsertTextParams{Text: "x"}); err != nil {
		t.Fatal(err)
	}
	third := mark()
	if third == second {
		t.Errorf("the mark did not move when a person typed")
	}
	if _, err := chromedp.Run(p.Context(), chromedp.Evaluate[bool](`document.forms[0].email.value = "ana@example.com", true`)); err != nil {
		t.Fatal(err)
	}
	if m := mark(); m == third {
		t.Errorf("the mark did not move when the page's script filled a declared form")
	}
	third = mark()
	if _, err := p.Navigate(ctx, hs.URL+"/b"); err != nil {
		t.Fatal(err)
	}
	if m := mark(); m == third || m == first {
		t.Errorf("the mark on another document is an earlier one: %q", m)
	}
}

// pageServing starts Chromium on /a of a loopback server that answers
// every path with html (skipped in -short mode and without Chromium);
// the page and the server end with the test, ctx within two minutes.
func pageServing(t *testing.T, html string) (context.Context, *Page, *httptest.Server) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium: not in -short mode")
	}
	require.Chromium(t)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(html))
	}))
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	p, err := Start(ctx, hs.URL+"/a", Options{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return ctx, p, hs
}

// TestChangeMarkLeavesSecretsOut: the mark hashes the values of the forms
// a page declares, but not a secret field's (the same fields secretOf
// never reads): when the page's script sets only a password, a new
// password, a card number or a one-time code the mark stays where it
// was; when it sets a plain field, the mark moves.
func TestChangeMarkLeavesSecretsOut(t *testing.T) {
	ctx, p, _ := pageServing(t, `<!doctype html><title>t</title>
<form toolname="sign_in"><input name="user"><input name="pw" type="password">
<input name="otp" autocomplete="one-time-code"></form>
<form data-pling-action="card.save"><input name="holder" data-pling-param>
<input name="number" data-pling-param autocomplete="billing CC-Number">
<input name="pin" data-pling-param autocomplete=" new-password"></form>`)
	mark := func(t *testing.T) string {
		t.Helper()
		m, err := p.ChangeMark(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	set := func(t *testing.T, js string) {
		t.Helper()
		if _, err := chromedp.Run(p.Context(), chromedp.Evaluate[bool](js+`, true`)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, set string
		moves     bool
	}{
		{"a password", `document.forms[0].pw.value = "hunter2"`, false},
		{"a one-time code", `document.forms[0].otp.value = "918273"`, false},
		{"a card number", `document.forms[1].number.value = "4111111111111111"`, false},
		{"a new password", `document.forms[1].pin.value = "7351"`, false},
		{"a plain field", `document.forms[0].user.value = "ana"`, true},
		{"another plain field", `document.forms[1].holder.value = "Ana Lima"`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := mark(t)
			set(t, c.set)
			if moved := mark(t) != before; moved != c.moves {
				t.Errorf("the mark moved: %v, want %v, when the page's script set %s", moved, c.moves, c.name)
			}
		})
	}
}

// secretFieldKinds are the kinds of form element the page-side copies
// of secretOf are held to: secret by their type, by an autocomplete
// token, or not, and the near misses (a type on an element that is not an
// input, a token that only contains "cc-" or "one-time"); tokens the
// browser does not know count as written (cc-pin), as secretOf reads the
// attribute, not the browser's autofill field.
var secretFieldKinds = []element{
	{tag: "input"},
	{tag: "input", attrs: map[string]string{"type": "text"}},
	{tag: "input", attrs: map[string]string{"type": " Password "}},
	{tag: "input", attrs: map[string]string{"type": "PASSWORD"}},
	{tag: "textarea", attrs: map[string]string{"type": "password"}},
	{tag: "input", attrs: map[string]string{"autocomplete": "username"}},
	{tag: "input", attrs: map[string]string{"autocomplete": "section-a current-password"}},
	{tag: "input", attrs: map[string]string{"autocomplete": "NEW-PASSWORD"}},
	{tag: "input", attrs: map[string]string{"autocomplete": "password"}},
	{tag: "input", attrs: map[string]string{"autocomplete": "new-password-hint"}},
	{tag: "input", attrs: map[string]string{"autocomplete": "shipping cc-exp"}},
	{tag: "input", attrs: map[string]string{"autocomplete": "billing\tcc-number"}},
	{tag: "input", attrs: map[string]string{"autocomplete": "x-cc-number"}},
	{tag: "input", attrs: map[string]string{"autocomplete": "cc-pin"}},
	{tag: "input", attrs: map[string]string{"autocomplete": "off cc-number"}},
	{tag: "input", attrs: map[string]string{"autocomplete": "one-time-code nickname"}},
	{tag: "select", attrs: map[string]string{"autocomplete": "cc-type"}},
	{tag: "textarea", attrs: map[string]string{"autocomplete": "one-time-code"}},
	{tag: "input", attrs: map[string]string{"autocomplete": "one-time-code"}},
	{tag: "input", attrs: map[string]string{"autocomplete": "one-time-codes"}},
	{tag: "input", attrs: map[string]string{"autocomplete": "my-one-time-code"}},
	{tag: "input", attrs: map[string]string{"autocomplete": "email", "type": "email"}},
	{tag: "input", attrs: map[string]string{"type": "password", "autocomplete": "off"}},
}

// TestSecretFieldJSIsSecretOf: the page-side test of a secret field
// (secretFieldJS, which the change mark uses) says what secretOf says of
// the same element.
func TestSecretFieldJSIsSecretOf(t *testing.T) {
	_, p, _ := pageServing(t, `<!doctype html><title>t</title>`)
	for _, e := range secretFieldKinds {
		attrs, _ := json.Marshal(e.attrs)
		js := `(() => { const e = document.createElement(` + strconv.Quote(e.tag) + `);
  for (const [k, v] of Object.entries(` + string(attrs) + ` || {})) e.setAttribute(k, v);
  return (` + secretFieldJS + `)(e); })()`
		got, err := chromedp.Run(p.Context(), chromedp.Evaluate[bool](js))
		if err != nil {
			t.Fatal(err)
		}
		if want := secretOf(&e) != ""; got != want {
			t.Errorf("<%s %v>: secretFieldJS says %v, secretOf %v", e.tag, e.attrs, got, want)
		}
	}
}

// TestShimSecretFieldIsSecretOf: pling.js keeps a field's value out of
// its form's defaults exactly where secretOf calls the field secret. Each
// kind of secretFieldKinds, holding a value, is a param of one markup
// form in a page that runs the shim (js-shim/pling.js, no module); its
// param as the shim declares it has a default just where secretOf says it
// is no secret.
func TestShimSecretFieldIsSecretOf(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "js-shim", "pling.js"))
	if err != nil {
		t.Fatal(err)
	}
	var fields strings.Builder
	for k, e := range secretFieldKinds {
		fmt.Fprintf(&fields, "<%s data-pling-param=f%d", e.tag, k)
		for n, v := range e.attrs {
			fmt.Fprintf(&fields, " %s=\"%s\"", n, html.EscapeString(v))
		}
		switch e.tag {
		case "select":
			fields.WriteString("><option>v</option></select>\n")
		case "textarea":
			fields.WriteString(">v</textarea>\n")
		default:
			fields.WriteString(" value=v>\n")
		}
	}
	_, p, _ := pageServing(t, `<!doctype html><title>t</title><script data-expose="*">`+string(src)+`</script>
<form data-pling-action="probe">`+fields.String()+`</form>`)
	params, err := chromedp.Run(p.Context(), chromedp.Poll[map[string]struct{ Default *string }](`(() => {
  const d = pling._pending && pling._pending.decls.find((d) => d.spec && d.spec.id === "probe");
  return d ? d.spec.params : null; })()`, chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatalf("the shim declared no form: %v", err)
	}
	for k, e := range secretFieldKinds {
		param, ok := params["f"+strconv.Itoa(k)]
		if !ok {
			t.Errorf("<%s %q>: no param", e.tag, e.attrs)
			continue
		}
		if secret, want := param.Default == nil, secretOf(&e) != ""; secret != want {
			t.Errorf("<%s %q> holding a value: the shim keeps it out of the defaults: %v, secretOf calls it secret: %v", e.tag, e.attrs, secret, want)
		}
	}
}
