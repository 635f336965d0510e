package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/internal/pagetext"
)

// A call's value too long for a result's text (maxValueText) is handed
// over whole as MCP resources, read in pages with resources/read
// (docs/agent.md "Large values"): a 5,000-row CSV export reaches the
// agent as it left the page, not as its first 600 characters. Each
// session holds its own values, bounded in count and bytes, and they
// go with it.
const (
	// ValuePageBytes bounds one page of a value handed over as a
	// resource: what one resources/read returns.
	ValuePageBytes = 32 << 10
	// MaxHeldValues and MaxHeldBytes bound the values one MCP session
	// holds: the oldest is let go to make room for a new one. A value
	// over MaxHeldBytes is not held; its result is cut as any other.
	MaxHeldValues = 16
	MaxHeldBytes  = 4 << 20
	// ValueTemplate is the URI template (RFC 6570) of a held value's
	// pages, listed by resources/templates/list: pling://value/v1?page=2.
	// Without page, the URI is the first page.
	ValueTemplate = "pling://value/{id}{?page}"
	// valueMIME is the type of a held value's text: the value's JSON (a
	// string value is one JSON string), which its pages, joined in
	// order, are.
	valueMIME = "application/json"
)

// heldValues are the values handed over as resources, per session.
type heldValues struct {
	mu       sync.Mutex
	sessions map[*sdk.ServerSession]*sessionValues
}

// sessionValues are one session's held values, oldest first.
type sessionValues struct {
	next  int
	items []*heldValue
	bytes int
}

type heldValue struct {
	id    string
	text  string // the value's JSON, every character a reader cannot see escaped; or a download's bytes
	pages []int  // where each page starts in text
	mime  string // "" for a value: valueMIME
	blob  bool   // a download that is not text: its pages are base64 blobs
}

func (v *heldValue) uri(page int) string {
	return "pling://value/" + v.id + "?page=" + strconv.Itoa(page)
}

// pageText is page n (from 1) of v.
func (v *heldValue) pageText(n int) string {
	end := len(v.text)
	if n < len(v.pages) {
		end = v.pages[n]
	}
	return v.text[v.pages[n-1]:end]
}

// valueJSON is a value's JSON as a held value's text: compact, so that
// nothing but a string can hold a character a reader cannot see, and
// with each such character in a string written as its JSON escape
// (pagetext.Escape) — still JSON, decoding to the value the page
// returned.
func valueJSON(v json.RawMessage) (string, bool) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return "", false
	}
	return pagetext.Escape(buf.String()), true
}

// paginate is where each page of text starts: pages of at most
// ValuePageBytes, each cut at the start of a character.
func paginate(text string) []int {
	starts := []int{0}
	for at := 0; len(text)-at > ValuePageBytes; {
		at += len(pagetext.CutBytes(text[at:], ValuePageBytes))
		starts = append(starts, at)
	}
	return starts
}

// hold keeps text for the session ss and returns it as held, with the
// ids of the older values it let go of to make room. held is nil when
// there is no session to hold it for, or text is over MaxHeldBytes.
func (h *heldValues) hold(ss *sdk.ServerSession, text string) (held *heldValue, dropped []string) {
	return h.keep(ss, &heldValue{text: text, pages: paginate(text)})
}

// holdFile keeps a downloaded file for the session ss, as hold keeps a
// value: text in pages cut at characters, anything else (blob) in pages
// of ValuePageBytes bytes.
func (h *heldValues) holdFile(ss *sdk.ServerSession, data []byte, mediaType string, blob bool) (held *heldValue, dropped []string) {
	v := &heldValue{text: string(data), mime: mediaType, blob: blob}
	if blob {
		v.pages = []int{0}
		for at := ValuePageBytes; at < len(data); at += ValuePageBytes {
			v.pages = append(v.pages, at)
		}
	} else {
		v.pages = paginate(v.text)
	}
	return h.keep(ss, v)
}

// keep holds v for the session ss, giving it its id.
func (h *heldValues) keep(ss *sdk.ServerSession, v *heldValue) (held *heldValue, dropped []string) {
	text := v.text
	if ss == nil || len(text) > MaxHeldBytes {
		return nil, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessions == nil {
		h.sessions = map[*sdk.ServerSession]*sessionValues{}
	}
	sv := h.sessions[ss]
	if sv == nil {
		sv = &sessionValues{}
		h.sessions[ss] = sv
		// The values go with the session: nothing a session was given
		// outlives it.
		go func() {
			_ = ss.Wait()
			h.mu.Lock()
			delete(h.sessions, ss)
			h.mu.Unlock()
		}()
	}
	for len(sv.items) > 0 && (len(sv.items) >= MaxHeldValues || sv.bytes+len(text) > MaxHeldBytes) {
		old := sv.items[0]
		sv.items = sv.items[1:]
		sv.bytes -= len(old.text)
		dropped = append(dropped, old.id)
	}
	sv.next++
	held = v
	held.id = "v" + strconv.Itoa(sv.next)
	sv.items = append(sv.items, held)
	sv.bytes += len(text)
	return held, dropped
}

// get is the held value id of the session ss, nil when it holds none.
func (h *heldValues) get(ss *sdk.ServerSession, id string) *heldValue {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sv := h.sessions[ss]; sv != nil {
		for _, v := range sv.items {
			if v.id == id {
				return v
			}
		}
	}
	return nil
}

// readValue answers resources/read of a held value's page, for the
// session that was given it only.
func (b *Bridge) readValue(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	notFound := func(why string) error {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: why, Data: json.RawMessage(fmt.Sprintf(`{"uri":%q}`, uri))}
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "pling" || u.Host != "value" {
		return nil, notFound("Resource not found")
	}
	id := strings.TrimPrefix(u.Path, "/")
	n := 1
	if p := u.Query().Get("page"); p != "" {
		if n, err = strconv.Atoi(p); err != nil || n < 1 {
			return nil, notFound("page must be a number from 1")
		}
	}
	v := b.held.get(req.Session, id)
	if v == nil {
		return nil, notFound(fmt.Sprintf("pling mcp does not hold the value %q for this session: it holds the last %d values it handed over (at most %d MiB in all); call the tool again for it",
			pagetext.Line(id, 40), MaxHeldValues, MaxHeldBytes>>20))
	}
	if n > len(v.pages) {
		return nil, notFound(fmt.Sprintf("the value %s has %d pages", v.id, len(v.pages)))
	}
	c := &sdk.ResourceContents{URI: uri, MIMEType: valueMIME, Text: v.pageText(n),
		Meta: sdk.Meta{MetaUntrusted: true, "pling/page": n, "pling/pages": len(v.pages)}}
	if v.mime != "" {
		c.MIMEType = v.mime
	}
	if v.blob {
		c.Text, c.Blob = "", []byte(v.pageText(n))
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{c}}, nil
}

// handover is what became of a value too long for a result's text.
type handover struct {
	held    *heldValue // nil: not held (tooBig says why)
	dropped []string   // held values let go of to make room
	size    int        // the value's JSON, in bytes
	tooBig  bool       // over MaxHeldBytes
	links   bool       // the client reads resource_link content
}

// linksVersion is the first MCP version with resource_link content in a
// tool result.
const linksVersion = "2025-06-18"

// readsLinks reports whether the client of ss reads resource_link
// content: one that asked for an earlier protocol version may refuse a
// result with a content type it does not know, so it is told the pages'
// URIs in the text only (it can read them all the same: resources are
// older than links).
func readsLinks(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	return p == nil || p.ProtocolVersion >= linksVersion
}

// handOver holds value for the session of a tool call when its text is
// longer than a result's text shows (limit characters: maxValueText for
// a capability's value, maxPageAnswer for a page's own WebMCP tool's
// answer); nil when it is not.
func (b *Bridge) handOver(ss *sdk.ServerSession, value json.RawMessage, limit int) *handover {
	if len(value) <= limit || ss == nil {
		return nil
	}
	if _, cut := pagetext.Cut(valueString(value), limit); cut == 0 {
		return nil
	}
	text, ok := valueJSON(value)
	if !ok {
		return nil
	}
	held, dropped := b.held.hold(ss, text)
	return &handover{held: held, dropped: dropped, size: len(text), tooBig: held == nil, links: readsLinks(ss)}
}

// note is what a result's text says of a value it cut, outside the
// page's quoted words.
func (h *handover) note(cut int) string {
	switch {
	case h == nil:
		return fmt.Sprintf(" (pling mcp cut %d more characters; structuredContent.value has more)", cut)
	case h.held == nil:
		return fmt.Sprintf(" (pling mcp cut %d more characters; the value's %d bytes are over the %d MiB it holds for a session, so it is not handed over whole; structuredContent.value has more)",
			cut, h.size, MaxHeldBytes>>20)
	}
	return fmt.Sprintf(" (pling mcp cut %d more characters here; the whole value is handed over, below)", cut)
}

// text is the result's lines that say where the whole value is.
func (h *handover) text() string {
	if h == nil || h.held == nil {
		return ""
	}
	v := h.held
	n := len(v.pages)
	where := v.uri(1)
	if n > 1 {
		where += " … " + v.uri(n)
	}
	linked := ", linked below"
	if !h.links {
		linked = ""
	}
	s := fmt.Sprintf("\nThe whole value (%d bytes of JSON, the page's data) is in %d resource(s) of at most %d bytes%s: read them in order with resources/read (%s) and join their text; a string value is one JSON string.",
		h.size, n, ValuePageBytes, linked, where)
	if len(h.dropped) > 0 {
		s += fmt.Sprintf(" To hold it, pling mcp let go of the earlier value(s) %s (it holds the last %d, at most %d MiB in all).",
			strings.Join(h.dropped, ", "), MaxHeldValues, MaxHeldBytes>>20)
	}
	return s
}

// apply adds the links to the held value's pages to r (for a client that
// reads them), and in its
// structured content puts where the value is in place of a value too
// large for it.
func (h *handover) apply(r *sdk.CallToolResult) {
	if h == nil || h.held == nil {
		return
	}
	v := h.held
	for i := range v.pages {
		if !h.links {
			break
		}
		size := int64(len(v.pageText(i + 1)))
		r.Content = append(r.Content, &sdk.ResourceLink{
			URI: v.uri(i + 1), Name: fmt.Sprintf("value %s, page %d of %d", v.id, i+1, len(v.pages)),
			MIMEType: valueMIME, Size: &size, Meta: sdk.Meta{MetaUntrusted: true},
		})
	}
	sc, _ := r.StructuredContent.(map[string]any)
	if sc == nil {
		return
	}
	if val, ok := sc["value"].(json.RawMessage); ok && !fitsStructured(val) {
		delete(sc, "value")
	}
	sc["valueResource"] = map[string]any{"uri": "pling://value/" + v.id, "pages": len(v.pages), "size": h.size, "mimeType": valueMIME}
}

// fitsStructured reports whether a value goes into structured content
// whole: no string in it over MaxStructuredString, its JSON within
// what boundStructured leaves it.
func fitsStructured(v json.RawMessage) bool {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var x any
	if d.Decode(&x) != nil {
		return false
	}
	jb := &jsonBound{budget: MaxStructuredBytes / 2}
	jb.value(x)
	return jb.strings+jb.dropped == 0
}

// valueString is a value as a result's text shows it: a string value as
// itself, any other as its JSON text.
func valueString(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}
