package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// uploadPage takes a file through a file input hidden behind its label,
// as pages style them, sends what it read to the server, and enables
// its Send button a moment later. It neither speaks Pling nor registers
// WebMCP tools.
const uploadPage = `<!doctype html><html><head><title>Attach</title></head><body>
<h1>Attach a file</h1>
<label>Attachment <input type="file" id="f" style="opacity:0;position:absolute;width:1px;height:1px"></label>
<label>Note <input id="note"></label>
<button id="send" disabled>Send</button>
<p id="out"></p>
<script>
const f = document.getElementById("f");
f.onchange = async () => {
  const file = f.files[0];
  const text = await file.text();
  await fetch("/got?name=" + encodeURIComponent(file.name), {method: "POST", body: text});
  document.getElementById("out").textContent = "Attached " + file.name;
  setTimeout(() => { document.getElementById("send").disabled = false; }, 800);
};
</script></body></html>`

// TestMCPViewUploadAndWait: through the pling binary (the official Go
// SDK's client) in Chromium, on a page without Pling, browser.act
// upload gives a hidden file input a file from the agent's text: the
// page reads exactly that text under the name given (a name with a path
// becomes upload.txt), and browser.act wait with a ref waits for the
// Send button to become enabled. A field that is not a file input, a
// file over the bound and a state the view has no word for are refused.
func TestMCPViewUploadAndWait(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pling and drives Chromium: not in -short mode")
	}
	browserTest(t)
	var mu sync.Mutex
	got := map[string]string{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /attach.html", htmlPage(func() string { return uploadPage }))
	mux.HandleFunc("POST /got", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<21))
		mu.Lock()
		got[r.URL.Query().Get("name")] = string(b)
		mu.Unlock()
	})
	site := serveAt(t, "127.0.0.1", mux)
	pp := startPlingProcess(t, buildPling(t), []string{"PLING_CDP="}, "mcp", site+"/attach.html")

	view, _ := pp.call(t, "browser.view", nil)
	t.Logf("the page's view:\n%s", view)
	m := regexp.MustCompile(`"Attachment" (e\d+)`).FindStringSubmatch(view)
	if m == nil {
		t.Fatalf("the view has no file input named Attachment:\n%s", view)
	}
	input, send, note := m[1], refOf(t, view, "button", "Send"), refOf(t, view, "textbox", "Note")
	if !strings.Contains(view, "wait with a ref waits for a state: visible, enabled") {
		t.Errorf("the first view does not say what browser.act wait takes:\n%s", view)
	}
	content := "id,note\n1,café ☕\n2,\"quoted, comma\"\n"
	out, res := pp.call(t, "browser.act", map[string]any{"do": "upload", "ref": input, "text": content, "name": "notes.csv"})
	if res.IsError || !strings.HasPrefix(out, `Uploaded "notes.csv" (`) {
		t.Fatalf("upload: %s", out)
	}
	out, res = pp.call(t, "browser.act", map[string]any{"do": "wait", "ref": send, "text": "enabled"})
	if res.IsError || !strings.Contains(out, "is enabled") {
		t.Fatalf("wait for Send to be enabled: %s", out)
	}
	mu.Lock()
	if got["notes.csv"] != content {
		t.Errorf("the page read %q as notes.csv, want %q (all it read: %q)", got["notes.csv"], content, got)
	}
	mu.Unlock()

	out, res = pp.call(t, "browser.act", map[string]any{"do": "upload", "ref": input, "text": "x", "name": "../../etc/passwd"})
	if res.IsError {
		t.Fatalf("upload with a path for a name: %s", out)
	}
	if out, res := pp.call(t, "browser.act", map[string]any{"do": "wait", "text": "Attached upload.txt"}); res.IsError {
		t.Errorf("a name with a path is not upload.txt to the page: %s", out)
	}

	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"not a file input", map[string]any{"do": "upload", "ref": note, "text": "x", "name": "a.txt"}, "NOT_ACTIONABLE: "},
		{"over the bound", map[string]any{"do": "upload", "ref": input, "text": strings.Repeat("x", 1<<20+1)}, "INVALID_ARGS: "},
		{"no such state", map[string]any{"do": "wait", "ref": send, "text": "shiny"}, "INVALID_ARGS: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if out, res := pp.call(t, "browser.act", tc.args); !res.IsError || !strings.HasPrefix(out, tc.want) {
				t.Errorf("want %s…, got %s", tc.want, out)
			}
		})
	}
}
