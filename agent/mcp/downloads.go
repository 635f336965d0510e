package mcp

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent/cdp"
)

// A file the page downloads after a call (an "Export CSV" link clicked
// through browser.act, a declared or WebMCP tool that builds a blob)
// reaches the agent as MCP resources it reads in pages, held as a large
// value is (values.go): the same URIs, bounds and lifetime, not a path on
// a disk the agent cannot see. Text comes as text, anything else as
// base64 blobs; a file over MaxHeldBytes is not read, and said so.

// Downloader is a Browser that hands over the files its pages download
// (*cdp.Page is one): each once, read and deleted.
type Downloader interface {
	TakeDownloads(ctx context.Context, wait time.Duration, max int64) []cdp.Download
}

// maxDownloadWait bounds how long a call's result waits for a download
// it started to finish.
const maxDownloadWait = 30 * time.Second

// takeDownloads adds to r the files the page downloaded since the last
// call: held for the session ss, linked, and said in r's text and
// structured content.
func (b *Bridge) takeDownloads(ctx context.Context, ss *sdk.ServerSession, r *sdk.CallToolResult) {
	d, ok := b.browser.(Downloader)
	if !ok || r == nil {
		return
	}
	files := d.TakeDownloads(ctx, maxDownloadWait, MaxHeldBytes)
	if len(files) == 0 {
		return
	}
	var t strings.Builder
	var said []map[string]any
	links := ss == nil || readsLinks(ss)
	for _, f := range files {
		name := quoteCut(f.Name, maxViewName)
		switch {
		case f.Failed != "":
			fmt.Fprintf(&t, "\nThe page's download %s failed: %s.", name, f.Failed)
			said = append(said, map[string]any{"name": f.Name, "failed": f.Failed})
			continue
		case f.TooBig:
			fmt.Fprintf(&t, "\nThe page downloaded %s (%d bytes): over the %d MiB pling mcp hands over, so it was not read (and is deleted).", name, f.Size, MaxHeldBytes>>20)
			said = append(said, map[string]any{"name": f.Name, "size": f.Size, "tooBig": true})
			continue
		}
		mt, text := fileType(f.Name, f.Data)
		held, dropped := b.held.holdFile(ss, f.Data, mt, !text)
		if held == nil {
			fmt.Fprintf(&t, "\nThe page downloaded %s (%s, %d bytes), which pling mcp cannot hold for this session.", name, mt, len(f.Data))
			continue
		}
		n := len(held.pages)
		where := held.uri(1)
		if n > 1 {
			where += " … " + held.uri(n)
		}
		linked, join := "", "join their text"
		if links {
			linked = ", linked below"
		}
		if !text {
			join = "decode each page's base64 blob and join the bytes"
		}
		fmt.Fprintf(&t, "\nThe page downloaded %s (%s, %d bytes, the page's data): in %d resource(s) of at most %d bytes%s; read them in order with resources/read (%s) and %s.",
			name, mt, len(f.Data), n, ValuePageBytes, linked, where, join)
		if len(dropped) > 0 {
			fmt.Fprintf(&t, " To hold it, pling mcp let go of the earlier value(s) %s.", strings.Join(dropped, ", "))
		}
		said = append(said, map[string]any{"name": f.Name, "uri": "pling://value/" + held.id, "pages": n, "size": len(f.Data), "mimeType": mt})
		for i := range n {
			if !links {
				break
			}
			size := int64(len(held.pageText(i + 1)))
			r.Content = append(r.Content, &sdk.ResourceLink{
				URI: held.uri(i + 1), Name: fmt.Sprintf("download %s, page %d of %d", held.id, i+1, n),
				MIMEType: mt, Size: &size, Meta: sdk.Meta{MetaUntrusted: true},
			})
		}
	}
	if tc, ok := r.Content[0].(*sdk.TextContent); ok {
		tc.Text += t.String()
	}
	if sc, ok := r.StructuredContent.(map[string]any); ok {
		sc["downloads"] = said
	} else if r.StructuredContent == nil {
		r.StructuredContent = map[string]any{"downloads": said}
	}
}

// fileType is a downloaded file's media type, from its name, else from
// its first bytes, and whether it is text: valid UTF-8 of a text type.
func fileType(name string, data []byte) (string, bool) {
	mt, _, _ := mime.ParseMediaType(mime.TypeByExtension(strings.ToLower(path.Ext(name))))
	if mt == "" {
		mt, _, _ = mime.ParseMediaType(http.DetectContentType(data))
	}
	if mt == "" {
		mt = "application/octet-stream"
	}
	textual := strings.HasPrefix(mt, "text/") || mt == "application/json" || mt == "application/xml" || strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml")
	return mt, textual && utf8.Valid(data)
}
