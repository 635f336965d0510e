package mcptest

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestText(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content []sdk.Content
		want    string
	}{
		{"none", nil, ""},
		{"text parts joined", []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}, "ab"},
		{"other parts left out", []sdk.Content{&sdk.ResourceLink{URI: "pling://value/v1"}, &sdk.TextContent{Text: "c"}}, "c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Text(&sdk.CallToolResult{Content: tc.content}); got != tc.want {
				t.Errorf("Text = %q, want %q", got, tc.want)
			}
		})
	}
}
