package main

import (
	"net/http"
	"strings"
	"testing"
)

// framePage is the inner page of a frame: name says which site it is.
func framePage(name string) string {
	return `<!doctype html><html><head><title>Inner</title></head><body>
<h2>` + name + ` notes</h2>
<label>Note <input id="note"></label>
<label>PIN <input type="password" value="frame-secret-` + name + `"></label>
<button id="save">Save</button><p id="out"></p>
<script>document.getElementById("save").onclick = () => { document.getElementById("out").textContent = "Saved " + document.getElementById("note").value; };</script>
</body></html>`
}

// TestMCPViewSameOriginFrames: through the pling binary and the Go SDK's
// client in Chromium, the view holds a same-origin frame's elements under
// its Iframe line (its password field not read), and browser.act fills
// and clicks in it; a frame of another origin is named and not entered,
// and once a frame goes to another origin its refs are refused.
func TestMCPViewSameOriginFrames(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pling and drives Chromium: not in -short mode")
	}
	partnerMux := http.NewServeMux()
	partnerMux.HandleFunc("GET /inner.html", htmlPage(func() string { return framePage("partner") }))
	partner := serveAt(t, "127.0.0.1", partnerMux)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /inner.html", htmlPage(func() string { return framePage("home") }))
	mux.HandleFunc("GET /outer.html", htmlPage(func() string {
		return `<!doctype html><html><head><title>Outer</title></head><body><h1>Outer</h1>
<button onclick="document.getElementById('home').src = '` + partner + `/inner.html'">Move the frame</button>
<iframe id="home" title="Home frame" src="/inner.html" style="margin-top:200px;width:500px;height:300px"></iframe>
<iframe title="Partner frame" src="` + partner + `/inner.html"></iframe>
<p>After the frames</p></body></html>`
	}))
	site := serveAt(t, "localhost", mux)
	pp := startPlingProcess(t, buildPling(t), nil, "mcp", site+"/outer.html")
	var said []string
	mustCall := func(t *testing.T, name string, args map[string]any) string {
		t.Helper()
		out, res := pp.call(t, name, args)
		said = append(said, out)
		if res.IsError {
			t.Fatalf("%s %v failed: %s", name, args, out)
		}
		return out
	}
	// The frames load after the page: wait for the inner heading.
	mustCall(t, "browser.act", map[string]any{"do": "wait", "text": "Outer"})
	var view string
	for i := 0; i < 20 && !strings.Contains(view, `"home notes"`); i++ {
		view = mustCall(t, "browser.view", map[string]any{"full": true})
	}
	for _, want := range []string{
		"Iframe \"Home frame\" e", "\n heading \"home notes\" e", "\n textbox \"Note\" e", `(password: not read)`,
		`(frame of another origin: not read)`, `"After the frames"`,
	} {
		if !strings.Contains(view, want) {
			t.Errorf("the view lacks %q:\n%s", want, view)
		}
	}
	if strings.Contains(view, "partner notes") {
		t.Errorf("the view entered the frame of another origin:\n%s", view)
	}
	mustCall(t, "browser.act", map[string]any{"do": "fill", "ref": refOf(t, view, "textbox", "Note"), "text": "hello"})
	out := mustCall(t, "browser.act", map[string]any{"do": "click", "ref": refOf(t, view, "button", "Save")})
	if !strings.Contains(out, `"Saved hello"`) {
		t.Errorf("the click in the frame: %s", out)
	}

	// The frame goes to another origin: its refs are refused, and the
	// view no longer enters it.
	note := refOf(t, view, "textbox", "Note")
	mustCall(t, "browser.act", map[string]any{"do": "click", "ref": refOf(t, view, "button", "Move the frame")})
	for i := 0; i < 20 && strings.Count(view, "frame of another origin") < 2; i++ {
		view = mustCall(t, "browser.view", map[string]any{"full": true})
	}
	if strings.Count(view, "(frame of another origin: not read)") != 2 || strings.Contains(view, "notes") {
		t.Errorf("after the frame moved to another origin, the view:\n%s", view)
	}
	if out, res := pp.call(t, "browser.act", map[string]any{"do": "fill", "ref": note, "text": "leak"}); !res.IsError {
		t.Errorf("a fill on a ref in the frame that moved to another origin answered %s", out)
	}
	for _, s := range said {
		if strings.Contains(s, "frame-secret") {
			t.Errorf("pling mcp returned a frame's password:\n%s", s)
		}
	}
}
