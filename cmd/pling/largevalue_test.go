package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	plingmcp "github.com/pling-go/pling/agent/mcp"
)

// exportCSV is a 5,000-row CSV export of about 250 KB, with a character
// a reader cannot see in one row (a user wrote it into a product name).
func exportCSV() string {
	var b strings.Builder
	b.WriteString("id,sku,name,price,stock,status\n")
	for i := 1; i <= 5000; i++ {
		name := fmt.Sprintf("Product %d (sun)", i)
		if i == 4321 {
			name = "Hidden\u202eeman"
		}
		fmt.Fprintf(&b, "%d,SKU-%05d,%s,%d.%02d,%d,active\n", i, i, name, 10+i%90, i%100, i%37)
	}
	return b.String()
}

// TestLargeValueHandedOver: through the pling binary (a child process,
// the Go SDK's client on its stdio), a tool whose value is a 5,000-row
// CSV returns it as MCP resource links, one a page; the client reads
// every page with resources/read, each at most mcp.ValuePageBytes, and
// their text joined is the value's JSON, which decodes to exactly the
// CSV the page returned. Every character a reader cannot see is
// escaped in the pages, and the value's template is listed. On a
// fixture page, and on a page in Chromium.
func TestLargeValueHandedOver(t *testing.T) {
	csv := exportCSV()
	if len(csv) < 240_000 || len(csv) > 260_000 {
		t.Fatalf("the CSV is %d bytes, want about 250 KB", len(csv))
	}
	ret, _ := json.Marshal(csv)
	bin := buildPling(t)
	t.Run("fixture", func(t *testing.T) {
		fixture := writeFixture(t, "export.json", `{"title": "Products", "actions": [
		  {"id": "products.export", "title": "Export the products as CSV", "risk": "read", "run": {"return": `+string(ret)+`}},
		  {"id": "products.count", "title": "Count the products", "risk": "read", "run": {"return": 5000}}]}`)
		checkHandedOver(t, startPlingProcess(t, bin, nil, "mcp", "--fixture", fixture, "--poll", "0"), csv)
	})
	t.Run("browser", func(t *testing.T) {
		browserTest(t)
		page := `<!doctype html><title>Products</title>
<script src="/pling/pling.js" data-expose="*"></script>
<script>
  const csv = ` + string(ret) + `;
  pling.action({ id: "products.export", title: "Export the products as CSV", risk: "read", run: () => csv });
  pling.action({ id: "products.count", title: "Count the products", risk: "read", run: () => 5000 });
</script>`
		checkHandedOver(t, startPlingProcess(t, bin, []string{"PLING_CDP="}, "mcp", servePage(t, "products.html", page), "--poll", "0"), csv)
	})
}

// checkHandedOver calls products_export on pp and reads the value it
// hands over, which must be csv; products_count's small value stays in
// its result.
func checkHandedOver(t *testing.T, pp *plingProcess, csv string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	if caps := pp.cs.InitializeResult().Capabilities; caps.Resources == nil {
		t.Errorf("the server declares no resources capability: %+v", caps)
	}
	tmpl, err := pp.cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatalf("resources/templates/list: %v", err)
	}
	if len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != plingmcp.ValueTemplate {
		t.Errorf("resource templates %+v, want one, %s", tmpl.ResourceTemplates, plingmcp.ValueTemplate)
	}

	res, err := pp.cs.CallTool(ctx, &sdk.CallToolParams{Name: "products_export", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("products_export: %v %+v", err, res)
	}
	var links []*sdk.ResourceLink
	var text string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.ResourceLink:
			links = append(links, c)
		case *sdk.TextContent:
			text += c.Text
		}
	}
	wantPages := (len(csv) + plingmcp.ValuePageBytes - 1) / plingmcp.ValuePageBytes
	if len(links) < wantPages {
		t.Fatalf("%d resource links, want at least %d (one a page); text:\n%s", len(links), wantPages, text)
	}
	for _, want := range []string{"The whole value (", "resources/read", "pling://value/"} {
		if !strings.Contains(text, want) {
			t.Errorf("the result's text says no %q:\n%s", want, text)
		}
	}
	if len(text) > 2000 {
		t.Errorf("the result's text is %d bytes: the value is in it, not handed over", len(text))
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if strings.Contains(string(sc), `"value"`) || !strings.Contains(string(sc), `"valueResource"`) {
		t.Errorf("structured content %s: want valueResource in place of the value", sc)
	}

	var joined strings.Builder
	for i, l := range links {
		if !strings.HasPrefix(l.URI, "pling://value/") || l.MIMEType != "application/json" || l.Size == nil {
			t.Errorf("link %d: %+v", i, l)
		}
		rr, err := pp.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: l.URI})
		if err != nil {
			t.Fatalf("resources/read %s: %v", l.URI, err)
		}
		if len(rr.Contents) != 1 {
			t.Fatalf("resources/read %s: %d contents", l.URI, len(rr.Contents))
		}
		page := rr.Contents[0].Text
		if len(page) > plingmcp.ValuePageBytes || int64(len(page)) != *l.Size {
			t.Errorf("page %d is %d bytes (link says %d), over %d or not as linked", i+1, len(page), *l.Size, plingmcp.ValuePageBytes)
		}
		if strings.ContainsRune(page, '\u202e') {
			t.Errorf("page %d carries U+202E unescaped", i+1)
		}
		joined.WriteString(page)
	}
	var got string
	if err := json.Unmarshal([]byte(joined.String()), &got); err != nil {
		t.Fatalf("the pages joined are not one JSON string: %v", err)
	}
	if got != csv {
		t.Errorf("the pages joined are not the CSV the page returned (%d bytes, want %d)", len(got), len(csv))
	}

	// Another session of the same server would not see them; a page past
	// the last, or a value never handed over, is "not found" with why.
	for _, uri := range []string{links[0].URI[:strings.Index(links[0].URI, "?")] + fmt.Sprintf("?page=%d", len(links)+1), "pling://value/v99"} {
		if _, err := pp.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("resources/read %s: no error", uri)
		}
	}

	// A small value stays in the result, with no link.
	res, err = pp.cs.CallTool(ctx, &sdk.CallToolParams{Name: "products_count", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("products_count: %v %+v", err, res)
	}
	if diff := cmp.Diff(1, len(res.Content)); diff != "" {
		t.Errorf("a small value's result has other content than its text (-want +got):\n%s", diff)
	}
}
