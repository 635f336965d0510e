// Package modeltool is a page's capabilities as model tools (docs/protocol.md
// §4.2.6 "Model tools"): the declaration a model API takes, the name it
// accepts, and an invoke's response written for a model. The wasm module's
// WebMCP mirror (pling.tools, pling.callTool, toolText), the conformance
// hosts and the MCP bridge (agent/mcp) all use it, so one capability list
// gives the same names and texts everywhere. It is internal: a user reaches
// model tools through the page API or pling mcp, not through Go.
package modeltool

import (
	"context"
	"strconv"
	"strings"

	"github.com/pling-go/pling/schema"
)

// Tool is a capability rendered as a model tool declaration: a name that
// model APIs accept, a description, and JSON Schema parameters. A folded
// capability's parameters include record.
type Tool struct {
	Name string `json:"name"`
	// Title is the action's title, for people (WebMCP and MCP "title").
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description"`
	Parameters  schema.JSONSchema `json:"parameters"`
	// Capability is the Surface capability id the tool invokes.
	Capability string `json:"capability"`
	// Annotations are the hints WebMCP defines, from the declaration.
	Annotations Annotations `json:"annotations"`
	// WaitsMs, when not 0, is how long a call may wait for a person
	// (approval or handoff); the description says so too.
	WaitsMs int64 `json:"waitsMs,omitempty"`
}

// Annotations are the WebMCP tool hints (the draft's ToolAnnotations;
// Chromium returns them from getTools): ReadOnly for risk read;
// Consequential for a destructive action or one that needs a person's
// approval; UntrustedContent for a read whose result carries the page's
// data, which its users may have written (RATIONALE.md).
type Annotations struct {
	ReadOnlyHint         bool `json:"readOnlyHint"`
	ConsequentialHint    bool `json:"consequentialHint"`
	UntrustedContentHint bool `json:"untrustedContentHint"`
}

// Name maps a capability id to a tool name model APIs accept
// (^[A-Za-z0-9_-]{1,64}$): '.' becomes '_', '@' becomes "__", anything else
// outside the set becomes '-'. Different ids may map to one name; name a
// list with Names, which resolves the collisions.
func Name(id string) string {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
			b.WriteByte(c)
		case c == '.':
			b.WriteByte('_')
		case c == '@':
			b.WriteString("__")
		default:
			b.WriteByte('-')
		}
	}
	s := b.String()
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

// Names names a list of capability ids (in the order given) as model
// tools: names[i] is Name(ids[i]), or, when an earlier id took that name,
// the first of its numeric suffixes "_2", "_3", … that no earlier name
// took, the base cut so the whole stays within 64 chars. Names are unique
// and valid for model APIs whatever the ids. The runtime's tool list, the
// WebMCP mirror and the MCP bridge (agent/mcp) all name tools with it, so
// one capability list gives the same names everywhere.
func Names(ids []string) []string {
	names := make([]string, len(ids))
	used := make(map[string]bool, len(ids))
	for i, id := range ids {
		base := Name(id)
		name := base
		for n := 2; used[name]; n++ {
			suffix := "_" + strconv.Itoa(n)
			b := base
			if len(b)+len(suffix) > 64 {
				b = b[:64-len(suffix)]
			}
			name = b + suffix
		}
		used[name] = true
		names[i] = name
	}
	return names
}

// The runtime's tool list and tool call need its registry and gate, so
// package runtime registers them here (Register, from its init) rather than
// export them: the functions are kept as any because this package cannot
// name *runtime.Runtime (runtime imports it), and List and Call assert
// them back to the runtime's method expressions.
var list, call any

// Register is called once, by package runtime, with (*Runtime).tools and
// (*Runtime).callTool.
func Register[R any](l func(R, context.Context, string) ([]Tool, error), c func(R, context.Context, string, string, string) []byte) {
	list, call = l, c
}

// List returns the capabilities a session may invoke now on rt, as model
// tools, in capability order. session is the session token, "" for none; a
// session that does not verify gets no tools.
func List[R any](rt R, ctx context.Context, session string) ([]Tool, error) {
	return list.(func(R, context.Context, string) ([]Tool, error))(rt, ctx, session)
}

// Call runs a model tool call on rt: the tool name from List and the
// arguments text the model produced. It returns the Surface response text
// (docs/protocol.md §4.2.6: arguments that are not one JSON object answer
// ok:true with INVALID_ARGS; otherwise the call is an invoke that takes the
// whole path, gate included).
func Call[R any](rt R, ctx context.Context, session, name, arguments string) []byte {
	return call.(func(R, context.Context, string, string, string) []byte)(rt, ctx, session, name, arguments)
}
