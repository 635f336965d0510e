package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	plingmcp "github.com/pling-go/pling/agent/mcp"
	"github.com/pling-go/pling/internal/testing/demotest"
)

// ordersCSV is a 3,000-row orders export (about 150 KB), with a
// character outside ASCII in some rows.
func ordersCSV() string {
	var b strings.Builder
	b.WriteString("id,customer,total,status\n")
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&b, "ord_%d,Client %d Müller,%d.%02d,%s\n", i, i%97, 10+i%900, i%100, []string{"pending", "approved", "shipped"}[i%3])
	}
	return b.String()
}

// downloadPage offers files the way pages do: a button whose script
// builds a CSV blob and clicks an <a download>, a link to a response
// with Content-Disposition, a binary file, and one too large to hand
// over. It neither speaks Pling nor registers WebMCP tools.
const downloadPage = `<!doctype html><html><head><title>Orders export</title></head><body>
<h1>Orders</h1>
<button id="export">Export CSV</button>
<a href="/report.csv">Download report</a>
<a href="/logo.bin" download="logo.bin">Download logo</a>
<a href="/huge.csv">Download everything</a>
<script>
document.getElementById("export").onclick = async () => {
  const csv = await (await fetch("/data.csv")).text();
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([csv], {type: "text/csv"}));
  a.download = "orders.csv";
  document.body.appendChild(a);
  a.click();
};
</script></body></html>`

// exportPlingPage declares a tool whose run downloads a CSV it builds:
// the declared path to the same kind of file.
const exportPlingPage = `<!doctype html><html><head><title>Export</title>
<script src="/pling/pling.js" data-expose="*"></script></head><body>
<script>
pling.action({ id: "orders.export", title: "Export the orders", risk: "read", run: () => {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob(["id,total\n1,10\n2,20\n"], { type: "text/csv" }));
  a.download = "small.csv";
  document.body.appendChild(a);
  a.click();
  return "exported";
} });
</script></body></html>`

// TestMCPDownloadAsResource: through the pling binary (the official Go
// SDK's client on its stdio) on a page without Pling in Chromium, a
// click through browser.act on "Export CSV" (a blob the page builds) and
// on a link to a Content-Disposition response each hand the file over as
// MCP resources: the client reads every page with resources/read, each
// at most mcp.ValuePageBytes, and their text joined is exactly the CSV;
// a binary file comes as base64 blob pages whose bytes joined are the
// file; a file over mcp.MaxHeldBytes is not read and the result says so;
// a declared tool whose run downloads a file hands it over the same way.
// No file is left in the download directory once it was handed over.
func TestMCPDownloadAsResource(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pling and drives Chromium: not in -short mode")
	}
	browserTest(t)
	csv := ordersCSV()
	report := strings.Repeat("week,orders\n1,42\n", 200)
	logo := make([]byte, 70_000)
	for i := range logo {
		logo[i] = byte(i * 7 % 251)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /export.html", htmlPage(func() string { return downloadPage }))
	mux.Handle("/pling/", http.StripPrefix("/pling/", http.FileServer(http.Dir(demotest.Dist(t)))))
	mux.HandleFunc("GET /export-pling.html", htmlPage(func() string { return exportPlingPage }))
	mux.HandleFunc("GET /data.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		io.WriteString(w, csv)
	})
	mux.HandleFunc("GET /report.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Disposition", `attachment; filename="weekly report.csv"`)
		io.WriteString(w, report)
	})
	mux.HandleFunc("GET /logo.bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(logo)
	})
	mux.HandleFunc("GET /huge.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Disposition", `attachment; filename="all.csv"`)
		line := strings.Repeat("x", 1023) + "\n"
		for i := 0; i < (plingmcp.MaxHeldBytes>>10)+64; i++ {
			io.WriteString(w, line)
		}
	})
	site := serveAt(t, "127.0.0.1", mux)
	tmp := t.TempDir()
	pp := startPlingProcess(t, buildPling(t), []string{"PLING_CDP=", "TMPDIR=" + tmp}, "mcp", site+"/export.html")

	click := func(t *testing.T, role, name string) *sdk.CallToolResult {
		t.Helper()
		view, _ := pp.call(t, "browser.view", map[string]any{"full": true})
		out, res := pp.call(t, "browser.act", map[string]any{"do": "click", "ref": refOf(t, view, role, name)})
		if res.IsError {
			t.Fatalf("click %s %q: %s", role, name, out)
		}
		return res
	}

	t.Run("blob", func(t *testing.T) {
		res := click(t, "button", "Export CSV")
		if got := readDownload(t, pp, res, "text/csv", `"orders.csv"`); got != csv {
			t.Errorf("the CSV read back is %d bytes, want the page's %d bytes exactly", len(got), len(csv))
		}
	})
	t.Run("Content-Disposition", func(t *testing.T) {
		res := click(t, "link", "Download report")
		if got := readDownload(t, pp, res, "text/csv", `"weekly report.csv"`); got != report {
			t.Errorf("the report read back is %q, want %q", got, report)
		}
	})
	t.Run("binary", func(t *testing.T) {
		res := click(t, "link", "Download logo")
		if got := readDownload(t, pp, res, "application/octet-stream", `"logo.bin"`); !bytes.Equal([]byte(got), logo) {
			t.Errorf("the file read back is %d bytes, not the page's %d", len(got), len(logo))
		}
	})
	t.Run("too big", func(t *testing.T) {
		res := click(t, "link", "Download everything")
		text := res.Content[0].(*sdk.TextContent).Text
		if !strings.Contains(text, `The page downloaded "all.csv"`) || !strings.Contains(text, "so it was not read") {
			t.Errorf("the result does not say the file was too big:\n%s", text)
		}
		for _, c := range res.Content {
			if l, ok := c.(*sdk.ResourceLink); ok {
				t.Errorf("a file too big is linked: %s", l.URI)
			}
		}
	})

	t.Run("declared tool", func(t *testing.T) {
		if out, res := pp.call(t, "browser.open", map[string]any{"url": "/export-pling.html"}); res.IsError {
			t.Fatalf("browser.open: %s", out)
		}
		pp.waitTool(t, "orders_export")
		out, res := pp.call(t, "orders_export", nil)
		if res.IsError {
			t.Fatalf("orders_export: %s", out)
		}
		if got := readDownload(t, pp, res, "text/csv", `"small.csv"`); got != "id,total\n1,10\n2,20\n" {
			t.Errorf("the declared tool's download read back is %q", got)
		}
	})

	// Every file read, nothing left behind.
	dirs, _ := filepath.Glob(filepath.Join(tmp, "pling-downloads-*"))
	if len(dirs) != 1 {
		t.Fatalf("download directories under TMPDIR: %v, want one", dirs)
	}
	if st, err := os.Stat(dirs[0]); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the download directory's mode: %v %v, want 0700", st.Mode(), err)
	}
	left, _ := os.ReadDir(dirs[0])
	for _, e := range left {
		t.Errorf("left in the download directory: %s", e.Name())
	}
}

// readDownload reads the file res hands over, page by page, checking
// the links, the text and each page's bounds, and returns its bytes.
func readDownload(t *testing.T, pp *plingProcess, res *sdk.CallToolResult, mediaType, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	text := res.Content[0].(*sdk.TextContent).Text
	if !strings.Contains(text, "The page downloaded "+name+" ("+mediaType+", ") || !strings.Contains(text, "resources/read") {
		t.Errorf("the result does not say the download of %s (%s):\n%s", name, mediaType, text)
	}
	var got bytes.Buffer
	pages := 0
	for _, c := range res.Content {
		l, ok := c.(*sdk.ResourceLink)
		if !ok {
			continue
		}
		pages++
		if !strings.HasPrefix(l.URI, "pling://value/") || l.MIMEType != mediaType || l.Size == nil {
			t.Errorf("link %d: %+v", pages, l)
		}
		rr, err := pp.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: l.URI})
		if err != nil || len(rr.Contents) != 1 {
			t.Fatalf("resources/read %s: %v", l.URI, err)
		}
		c := rr.Contents[0]
		page := []byte(c.Text)
		if strings.HasPrefix(mediaType, "text/") != (c.Blob == nil) {
			t.Errorf("page %d of a %s file: text %d bytes, blob %d bytes", pages, mediaType, len(c.Text), len(c.Blob))
		}
		if c.Blob != nil {
			page = c.Blob
		}
		if len(page) > plingmcp.ValuePageBytes || int64(len(page)) != *l.Size {
			t.Errorf("page %d is %d bytes (link says %d), over %d or not as linked", pages, len(page), *l.Size, plingmcp.ValuePageBytes)
		}
		got.Write(page)
	}
	if pages == 0 {
		t.Fatalf("no resource links in the result:\n%s", text)
	}
	return got.String()
}
