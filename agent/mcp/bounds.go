package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/runtime"
)

// Agent-side bounds (docs/agent.md "Security"): a page is untrusted, and a
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
	// MaxResultBytes bounds one tool result: its text and its structured
	// content, each.
	MaxResultBytes = 64 << 10
)

var _ = runtime.DefaultLimits // the bounds above are the runtime's

// cutText is s cut to at most max characters, and how many were cut.
func cutText(s string, max int) (string, int) {
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s, 0
	}
	i, k := 0, 0
	for i = range s {
		if k == max {
			break
		}
		k++
	}
	return s[:i], n - max
}

// pageWords marks text as the page's: quoted as a JSON string (so the page
// cannot close the quote and go on in the bridge's voice) after the
// bridge's "From the page:".
func pageWords(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return "From the page: " + string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// capabilityText is a capability's title and description as a tool's
// description: bounded and marked as the page's.
func capabilityText(title, description string) string {
	t, tcut := cutText(title, MaxTitleLen)
	d, dcut := cutText(description, MaxDescriptionLen)
	text := t
	if d != "" {
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

// boundTools keeps at most MaxTools tools and MaxListBytes of their JSON;
// when it drops some, the last tool kept says so.
func boundTools(tools []Tool) ([]Tool, int) {
	size := 0
	for i, t := range tools {
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

// boundResult cuts a tool result's text and structured content to
// MaxResultBytes each, saying so.
func boundResult(r *sdk.CallToolResult) *sdk.CallToolResult {
	if r == nil {
		return r
	}
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok && len(tc.Text) > MaxResultBytes {
			cut := tc.Text[:MaxResultBytes]
			for !utf8.ValidString(cut) {
				cut = cut[:len(cut)-1]
			}
			tc.Text = cut + fmt.Sprintf("\n(pling mcp cut this result: %d more bytes)", len(tc.Text)-len(cut))
		}
	}
	if r.StructuredContent != nil {
		if raw, err := json.Marshal(r.StructuredContent); err == nil && len(raw) > MaxResultBytes {
			r.StructuredContent = map[string]any{"cut": fmt.Sprintf("pling mcp left out the structured content: %d bytes, over the bound of %d", len(raw), MaxResultBytes)}
		}
	}
	return r
}
