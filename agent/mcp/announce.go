package mcp

import (
	"context"
	"sort"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// announcer keeps notifications/tools/list_changed to the changes a
// client has not seen: none before its first tools/list, none for a
// list identical to the one it last received (start-up, where the first
// describe and the client's first tools/list race, announced an
// identical list), and none for a change that a later change undid
// before the SDK sent it.
type announcer struct {
	mu    sync.Mutex
	seen  bool   // the client has received a tool list
	known string // the page tools it last received or was told of (signature)
	now   string // the page tools the server lists now (signature)
}

// signature names a set of page tools: each name with its spec. The
// browser.* tools never change and are left out.
func signature(names map[string][]byte) string {
	keys := make([]string, 0, len(names))
	for k := range names {
		if !strings.HasPrefix(k, "browser.") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.Write(names[k])
		b.WriteByte(0)
	}
	return b.String()
}

// published records the tools the server lists now.
func (a *announcer) published(tools map[string]toolEntry) {
	specs := make(map[string][]byte, len(tools))
	for n, e := range tools {
		specs[n] = e.spec
	}
	sig := signature(specs)
	a.mu.Lock()
	a.now = sig
	a.mu.Unlock()
}

// listed is a receiving middleware, inside the bridge's (which has
// published the page's tools by then): the tools/list it lets through
// answers with what the server lists now, which the client then knows.
// A change published meanwhile is announced, as it should be.
func (a *announcer) listed(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if p, ok := req.GetParams().(*sdk.ListToolsParams); method == "tools/list" && ok && (p == nil || p.Cursor == "") {
			a.mu.Lock()
			a.seen, a.known = true, a.now
			a.mu.Unlock()
		}
		return next(ctx, method, req)
	}
}

// gate is a sending middleware: it drops a tools/list_changed the client
// does not need.
func (a *announcer) gate(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "notifications/tools/list_changed" {
			a.mu.Lock()
			send := a.seen && a.known != a.now
			if send {
				a.known = a.now
			}
			a.mu.Unlock()
			if !send {
				return nil, nil
			}
		}
		return next(ctx, method, req)
	}
}
