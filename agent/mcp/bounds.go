package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/internal/pagetext"
)

// Agent-side bounds (docs/agent.md "Security"), the runtime's own
// (TestBoundsAreTheRuntimes): a page is untrusted, and a
// page that does not run the Pling runtime (or one that lies) is not held
// to its limits, so the bridge applies them again before anything reaches
// the model, and says when it cut something. And every text the page
// wrote reaches the model quoted and marked as the page's, so that it
// cannot pose as the bridge's own words.
const (
	// MaxTools is the most capability tools offered (the runtime's
	// describe bound, runtime.DefaultLimits().MaxCapabilities).
	MaxTools = 1000
	// MaxListBytes bounds the capability tools' JSON together (the
	// runtime's describe bound, runtime.DefaultLimits().MaxBytes).
	MaxListBytes = 512 << 10
	// MaxTitleLen and MaxDescriptionLen bound a capability's title and
	// description, in characters (the runtime's declaration limits).
	MaxTitleLen       = 200
	MaxDescriptionLen = 2000
	// MaxResultBytes bounds one tool result's text.
	MaxResultBytes = 64 << 10
	// MaxStructuredBytes bounds one tool result's structured content (its
	// JSON), and MaxStructuredString each string in it, in characters
	// (a description's bound): a model may read structuredContent as it
	// reads the text, so the page's data there is bounded as tightly.
	MaxStructuredBytes  = 16 << 10
	MaxStructuredString = MaxDescriptionLen
)

// cutText is s cut to at most max characters, and how many were cut.
func cutText(s string, max int) (string, int) { return pagetext.Cut(s, max) }

// pageWords marks text as the page's: quoted as a JSON string (so the page
// cannot close the quote and go on in the bridge's voice), every character
// a reader cannot see escaped, after the bridge's "From the page:".
func pageWords(s string) string { return pagetext.Words(s) }

// capabilityText is a capability's title and description as a tool's
// description: bounded and marked as the page's.
func capabilityText(title, description string) string {
	t, tcut := cutText(title, MaxTitleLen)
	d, dcut := cutText(description, MaxDescriptionLen)
	text := t
	if d != "" && t == "" {
		text = d
	} else if d != "" {
		text += ". " + d
		if rest, ok := strings.CutPrefix(d, strings.TrimRight(t, ".")); ok && t != "" && (rest == "" || strings.ContainsAny(rest[:1], ".!?")) {
			text = d // a title taken from the description's first sentence is not said twice
		}
	}
	out := pageWords(text)
	if tcut+dcut > 0 {
		out += fmt.Sprintf(" (pling mcp cut %d characters the page wrote)", tcut+dcut)
	}
	return out
}

// saidTitle is the title a capability's tool says: none when it is the
// capability's id and a description says what it does, as for a WebMCP
// declarative form without tooltitle (the runtime gives an action
// without a title its id; the tool's name already says it).
func saidTitle(id, title, description string) string {
	if title == id && description != "" {
		return ""
	}
	return title
}

// titleSaid reports whether a tool's description already begins with its
// title, so that the title (MCP Tool.title, for a client's display) would
// only send the same words again: words is the page's quoted text as the
// description says it (pageWords), and the title must be its first words
// up to the end of the quote or of a sentence. A title that adds
// something ("Look up a word" over "Finds a word") is not said.
func titleSaid(title, words string) bool {
	if title == "" {
		return false
	}
	rest, ok := strings.CutPrefix(words, strings.TrimSuffix(pageWords(title), `"`))
	if !ok || rest == "" {
		return false
	}
	return strings.ContainsAny(rest[:1], `".!?:`) || (rest[0] == ' ' && strings.ContainsAny(title[len(title)-1:], ".!?:"))
}

// boundTools keeps at most MaxTools tools and MaxListBytes of their JSON,
// each description and title escaped (pagetext.EscapeText); when it
// drops some, the last tool kept says so.
func boundTools(tools []Tool) ([]Tool, int) {
	size := 0
	for i, t := range tools {
		// What a reader cannot see is escaped in everything a tool says,
		// whatever put it there (a record kind, a label in an example).
		// Only a tool that needs it is changed: a tool kept from an
		// earlier list may be read by the server meanwhile.
		if d, ti := pagetext.EscapeText(t.Tool.Description), pagetext.EscapeText(t.Tool.Title); d != t.Tool.Description || ti != t.Tool.Title {
			c := *t.Tool
			c.Description, c.Title = d, ti
			tools[i].Tool = &c
			t = tools[i]
		}
		spec, _ := json.Marshal(t.Tool)
		size += len(spec)
		if i >= MaxTools || size > MaxListBytes {
			dropped := len(tools) - i
			if i == 0 {
				return nil, dropped
			}
			last := *tools[i-1].Tool
			last.Description += fmt.Sprintf(" (pling mcp: %d more tools of this page are not offered: over the bound of %d tools or %d KiB)",
				dropped, MaxTools, MaxListBytes>>10)
			out := append([]Tool(nil), tools[:i]...)
			out[i-1].Tool = &last
			return out, dropped
		}
	}
	return tools, 0
}

// boundResult is what every tool result goes through on its way to the
// client (the bridge's middleware): each character a reader cannot see is
// escaped in its text and in every string of its structured content
// (pagetext.EscapeText), the text is cut to MaxResultBytes and the structured
// content to MaxStructuredBytes, each saying so where it was cut.
func boundResult(r *sdk.CallToolResult) *sdk.CallToolResult {
	if r == nil {
		return r
	}
	for _, c := range r.Content {
		tc, ok := c.(*sdk.TextContent)
		if !ok {
			continue
		}
		if len(tc.Text) > MaxResultBytes {
			cut := pagetext.CutBytes(tc.Text, MaxResultBytes)
			tc.Text = pagetext.EscapeText(cut) + fmt.Sprintf("\n(pling mcp cut this result: %d more bytes)", len(tc.Text)-len(cut))
		} else {
			tc.Text = pagetext.EscapeText(tc.Text)
		}
	}
	if r.StructuredContent != nil {
		r.StructuredContent = boundStructured(r.StructuredContent)
	}
	return r
}

// boundStructured is a result's structured content with every string
// (keys too) escaped and cut to MaxStructuredString characters, and, when
// its JSON would pass MaxStructuredBytes, members and items left out
// (the small members kept first, so the value is what gives way). What
// was cut is said in its "cut" member.
func boundStructured(sc any) any {
	raw, err := json.Marshal(sc)
	if err != nil {
		return map[string]any{"cut": "pling mcp left out the structured content: it is not JSON"}
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return map[string]any{"cut": "pling mcp left out the structured content: it is not JSON"}
	}
	jb := &jsonBound{budget: MaxStructuredBytes - 300} // room for the note
	out := jb.value(v)
	if jb.strings+jb.dropped == 0 {
		return out
	}
	note := fmt.Sprintf("pling mcp cut the page's data here to its bound (each string at most %d characters, the whole at most %d bytes): %d string(s) cut, %d item(s) left out of %d bytes",
		MaxStructuredString, MaxStructuredBytes, jb.strings, jb.dropped, len(raw))
	if m, ok := out.(map[string]any); ok {
		m["cut"] = note
		return m
	}
	return map[string]any{"cut": note, "content": out}
}

// jsonBound walks decoded JSON within a byte budget.
type jsonBound struct {
	budget           int
	strings, dropped int
}

func (jb *jsonBound) str(s string) string {
	e := pagetext.EscapeText(s)
	c, n := pagetext.Cut(e, MaxStructuredString)
	if lim := max(jb.budget-2, 0); len(c) > lim {
		c, n = pagetext.CutBytes(c, lim), 1
	}
	if n > 0 {
		jb.strings++
		c += "…"
	}
	jb.budget -= len(c) + 2
	return c
}

func (jb *jsonBound) value(v any) any {
	switch x := v.(type) {
	case string:
		return jb.str(x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		size := make(map[string]int, len(x))
		for k, e := range x {
			keys = append(keys, k)
			b, _ := json.Marshal(e)
			size[k] = len(b)
		}
		sort.Slice(keys, func(i, j int) bool {
			if size[keys[i]] != size[keys[j]] {
				return size[keys[i]] < size[keys[j]]
			}
			return keys[i] < keys[j]
		})
		out := make(map[string]any, len(x))
		for _, k := range keys {
			if jb.budget <= len(k)+8 {
				jb.dropped++
				continue
			}
			jb.budget -= 2
			out[jb.str(k)] = jb.value(x[k])
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			if jb.budget <= 8 {
				jb.dropped++
				continue
			}
			jb.budget--
			out = append(out, jb.value(e))
		}
		return out
	case json.Number:
		jb.budget -= len(x)
		return x
	default: // bool, null
		jb.budget -= 5
		return x
	}
}
