package mcptest

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestText: a result's text is its text contents joined, other contents
// left out.
func TestText(t *testing.T) {
	r := &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.TextContent{Text: "OK: note.add ran."},
		&sdk.ImageContent{MIMEType: "image/png", Data: []byte{1}},
		&sdk.TextContent{Text: "\nValue: 2"},
	}}
	if got, want := Text(r), "OK: note.add ran.\nValue: 2"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
	if got := Text(&sdk.CallToolResult{}); got != "" {
		t.Errorf("Text of no content = %q", got)
	}
}
