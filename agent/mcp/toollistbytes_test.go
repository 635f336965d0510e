package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	plingmcp "github.com/pling-go/pling/agent/mcp"
	"github.com/pling-go/pling/internal/testing/demotest"
	"github.com/pling-go/pling/internal/testing/require"
)

// TestFirstToolListBytes: on the demo shop and the help desk in
// Chromium, no tool of the first tools/list sends its title again when
// its description already begins with it; the test logs the list's JSON
// bytes (go test -v).
func TestFirstToolListBytes(t *testing.T) {
	for _, tc := range []struct {
		name, tool string
		open       func(t *testing.T) *session
	}{
		{"demo shop", "cart_add", func(t *testing.T) *session {
			require.Chromium(t)
			base := demotest.Serve(t, demotest.Dist(t))
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			p, err := cdp.Open(ctx, base+"/shop/", cdp.Options{Timeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			return connect(t, plingmcp.NewBridge(agent.New(p), plingmcp.WithBrowser(p, base)))
		}},
		{"help desk", "close__ticket", func(t *testing.T) *session {
			s, _ := helpdeskSession(t, "/tickets/")
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.open(t)
			waitTools(t, s, tc.tool, true)
			res := s.listTools(t)
			titles := 0
			for _, tl := range res.Tools {
				titles += len(tl.Title)
				if tl.Title != "" && strings.HasPrefix(tl.Description, `From the page: "`+tl.Title) {
					t.Errorf("%s: title %q sent again before its description %q", tl.Name, tl.Title, tl.Description)
				}
			}
			out, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("first tools/list: %d tools, %d B of JSON, %d B of titles", len(res.Tools), len(out), titles)
		})
	}
}
