// Package mcp bridges a Pling page to the Model Context Protocol
// (docs/agent.md): NewServer returns an MCP server (the official Go SDK's
// *mcp.Server) whose tools are the capabilities the page exposes to the
// client's session, each tool call an invoke through the agent.Client — so
// the recovery rules of docs/protocol.md §5.7 apply to every call a model makes.
//
// Tools are named as modeltool.List names them (modeltool.Names, which
// resolves names that collide); a folded capability's input
// schema gains the required "record" property. The list follows the page:
// the bridge describes again on every tools/list, after an invoke whose
// observation reports a new revision (or capabilitiesChanged, or a
// describe-again code), and on Bridge.Refresh or Bridge.Watch; when tools
// come, go or change, the SDK sends notifications/tools/list_changed.
//
// The bridge itself (this file) keeps the tool list in step with the
// page; tools.go makes a capability a tool, availability.go the tools of
// what is unavailable now, call.go a tool call an invoke, and results.go
// the invoke's answer a tool result.
//
// Results: a success is a tool result whose text is a short account for a
// model (what ran, the value, the evidence, the changed states) and whose
// structured content holds the value, evidence and observation (a value
// too long for the text is handed over whole as MCP resources, read in
// pages: values.go); a business
// failure (result.error) is a tool result with isError, the stable code
// and the next step in one line, so the model can read it and choose; a
// protocol failure (ok:false, an unconfirmed call, a broken transport) is
// a JSON-RPC error whose data carries the code.
//
// A folded tool takes its record by id or by label (records.go). With
// WithBrowser the bridge works on a browsing session: browser.* tools
// beside the page's, which follow the page the tab shows (browsing.go).
// With WithGuard the client sends through a Guard, which sends each
// request only to the document the bridge checked (read from the browser)
// with the token for its origin (guard.go); tool names stay bound for the
// session (names.go), and what a page describes is bounded and quoted as
// the page's (bounds.go).
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/schema"
)

// CodeSurfaceFailure is the JSON-RPC error code of a Surface protocol
// failure (server-defined range); data.code holds the Surface code.
const CodeSurfaceFailure = -32001

// Option configures a Bridge.
type Option func(*options)

type options struct {
	impl         *sdk.Implementation
	logger       *slog.Logger
	instructions *string
	browser      Browser
	origins      []string
	guard        *Guard
	mark         func(context.Context) (string, error)
	screen       string // WithApprovalScreen
}

// WithImplementation names the server in the MCP handshake (default
// "pling").
func WithImplementation(name, version string) Option {
	return func(o *options) { o.impl = &sdk.Implementation{Name: name, Version: version} }
}

// WithLogger sets where the bridge logs (default: nowhere). Over stdio,
// never stdout.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithInstructions sets the instructions sent to the client (default
// Instructions, or BrowsingInstructions with WithBrowser).
func WithInstructions(s string) Option { return func(o *options) { o.instructions = &s } }

// WithChangeMark gives the bridge a mark that moves whenever the page
// may have changed (cdp.Page.ChangeMark; with WithBrowser, a browser
// that has ChangeMark gives it by itself): Watch then describes only
// when the mark moved since the last describe, or when QuietDescribe
// passed without one, for a page that changes without moving it.
func WithChangeMark(mark func(context.Context) (string, error)) Option {
	return func(o *options) { o.mark = mark }
}

// QuietDescribe is the longest Watch goes without a describe when the
// page's change mark (WithChangeMark) stays where it was: what a page
// changes without touching its DOM (data its script keeps, a timer)
// still reaches the tool list.
const QuietDescribe = time.Minute

// Bridge keeps an MCP server's tool list in step with a page.
type Bridge struct {
	client *agent.Client
	server *sdk.Server
	log    *slog.Logger

	// refreshing serializes refreshes, and is taken before mu.
	refreshing sync.Mutex

	mu       sync.Mutex // not held while a describe is out (refreshLocked): a call does not wait for one
	loaded   bool
	revision string
	tools    map[string]toolEntry // by tool name
	desc     *schema.SurfaceDescription
	page     PageInfo
	allowed  bool // the current page is in an allowed origin
	// seenNav is the links and landmarks the agent was last told of
	// (one stdio session a bridge): a navigation that finds the same
	// ones does not list them again.
	seenNav string

	browser  Browser
	origins  []string
	guard    *Guard          // with WithGuard: where checked documents are pinned
	docs     DocumentBrowser // the browser, when it names documents
	doc      Document        // the document described last (with docs)
	view     viewState       // the view the agent's refs come from (view.go)
	looked   viewState       // the last view the agent was shown whole, what a look is scoped to (viewdiff.go)
	viewSaid bool            // a view result said what browser.act's description leaves out

	// published is what the MCP server lists (publishLocked), by name:
	// the tools as the last settled check saw them. announce is what the
	// client was told (announce.go).
	published map[string]toolEntry
	announce  announcer

	// A tool name, once given to a capability, stays that capability's
	// for the session (names.go).
	bound map[string]string // tool name → capability
	names map[string]string // capability → tool name

	// held are the values too long for a result, handed over as
	// resources (values.go).
	held heldValues

	// mark reads the page's change mark (WithChangeMark); described is
	// the mark read before the last describe that answered, and
	// describedAt when it answered. quiet is QuietDescribe.
	mark        func(context.Context) (string, error)
	described   string
	describedAt time.Time
	quiet       time.Duration

	// screen is the authority whose approval screen the host is asked to
	// open (WithApprovalScreen; "" none); pending are the calls waiting
	// for the host's answer, by request state (approvalscreen.go).
	screen  string
	pendMu  sync.Mutex
	pending map[string]*pendingCall
}

type toolEntry struct {
	capability string
	tool       *sdk.Tool
	handler    sdk.ToolHandler // nil: an invoke of capability
	// placeholder is a tool first listed while its capability could not
	// run: it stays as listed when the capability becomes available
	// (its parameters come in that result), so the list stays stable.
	placeholder bool
	openSchema  bool   // a placeholder listed without its input schema (parametersOf)
	spec        []byte // the tool's JSON, to tell a changed tool from the same one
}

// NewServer returns an MCP server exposing the page behind c as tools. It is
// NewBridge(c, opts...).Server().
func NewServer(c *agent.Client, opts ...Option) *sdk.Server {
	return NewBridge(c, opts...).Server()
}

// NewBridge returns a bridge to the page behind c. Its tool list is loaded
// by the first tools/list or tools/call, or by Refresh.
func NewBridge(c *agent.Client, opts ...Option) *Bridge {
	o := options{impl: &sdk.Implementation{Name: "pling", Version: schema.Protocol}}
	for _, f := range opts {
		f(&o)
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	b := &Bridge{client: c, log: o.logger, tools: map[string]toolEntry{}, browser: o.browser, origins: o.origins, guard: o.guard,
		bound: map[string]string{}, names: map[string]string{}, published: map[string]toolEntry{}, mark: o.mark, quiet: QuietDescribe, screen: o.screen}
	if cm, ok := o.browser.(interface {
		ChangeMark(context.Context) (string, error)
	}); ok && b.mark == nil {
		b.mark = cm.ChangeMark
	}
	if db, ok := o.browser.(DocumentBrowser); ok {
		b.docs = db
	}
	instructions := Instructions
	if o.browser != nil {
		instructions = BrowsingInstructions
	}
	if o.instructions != nil {
		instructions = *o.instructions
	}
	b.server = sdk.NewServer(o.impl, &sdk.ServerOptions{
		Logger:       o.logger,
		Instructions: instructions,
		// Tools with listChanged even before the first tool: a page may
		// declare its capabilities after the client connected.
		// Resources: a value too long for a result is handed over as
		// resources (values.go), all of one template; none is listed.
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}, Resources: &sdk.ResourceCapabilities{}},
	})
	b.server.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "value",
		URITemplate: ValueTemplate,
		MIMEType:    valueMIME,
		Description: fmt.Sprintf("A tool call's value too long for its result (the page's data, as JSON), or a file the page downloaded (its own type), in pages of at most %d bytes. The result links every page.", ValuePageBytes),
		Meta:        sdk.Meta{MetaUntrusted: true},
	}, b.readValue)
	b.server.AddReceivingMiddleware(b.middleware, b.announce.listed, leanLists)
	b.server.AddSendingMiddleware(b.announce.gate)
	if b.browser != nil {
		b.addBrowserTools()
		if v, ok := b.browser.(Viewer); ok {
			b.addViewTools(v)
		}
		b.browser.OnNavigate(b.navigated)
	}
	return b
}

// Server returns the MCP server.
func (b *Bridge) Server() *sdk.Server { return b.server }

// Revision returns the page revision the tool list was built from ("" before
// the first load).
func (b *Bridge) Revision() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.revision
}

// middleware describes the page before tools/list (on-demand refresh), and
// before the first tools/call of a client that did not list; every tool
// result — the page's tools, the browsing tools, the page's own WebMCP
// tools, the bridge's own answers — leaves through boundResult.
func (b *Bridge) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	inner := b.refreshingMiddleware(next)
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := inner(ctx, method, req)
		if r, ok := res.(*sdk.CallToolResult); ok && method == "tools/call" {
			boundResult(r)
		}
		return res, err
	}
}

// refreshingMiddleware describes the page before a tools/list, unless
// its change mark is where it was at the last describe of a page that
// speaks Pling (listUnchanged), and before the first tools/call of a
// client that did not list.
func (b *Bridge) refreshingMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "tools/list":
			if b.listUnchanged(ctx) {
				break
			}
			if _, err := b.Refresh(ctx); err != nil {
				if !b.isLoaded() {
					return nil, rpcError(err)
				}
				// A stale list is better than none; the failure is logged.
				b.log.LogAttrs(ctx, slog.LevelWarn, "pling mcp: describe failed; serving the last tool list",
					slog.String("error", err.Error()))
			}
		case "tools/call":
			if res := b.notOffered(req); res != nil {
				return res, nil
			}
			if !b.isLoaded() {
				if _, err := b.Refresh(ctx); err != nil {
					return nil, rpcError(err)
				}
			}
			if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok && !b.known(p.Name) {
				// The tab may have just navigated (the tools of the new
				// page are still being checked): look once more before
				// saying the page has no such tool.
				if b.browser != nil {
					b.settle(ctx, p.Name)
				}
				if !b.known(p.Name) {
					return b.unknownTool(p.Name), nil
				}
			}
		}
		return next(ctx, method, req)
	}
}

// settle refreshes the tools until name is among them or the page
// checks out as one that speaks Pling (at most 3 s): right after a
// navigation the new page's tools may not be listed yet.
func (b *Bridge) settle(ctx context.Context, name string) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		_, err := b.Refresh(ctx)
		if b.known(name) || ctx.Err() != nil || time.Now().After(deadline) {
			return
		}
		b.mu.Lock()
		settled := err == nil && b.allowed && b.page.Pling
		b.mu.Unlock()
		if settled {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *Bridge) isLoaded() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.loaded
}

// Refresh describes the page and brings the tool list up to date: tools
// that left are removed, new and changed ones added. changed reports
// whether the list changed (the SDK then notifies clients with
// notifications/tools/list_changed).
func (b *Bridge) Refresh(ctx context.Context) (changed bool, err error) {
	b.refreshing.Lock()
	defer b.refreshing.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	changed, err = b.refreshLocked(ctx)
	b.publishLocked(ctx)
	return changed, err
}

// refreshQuietly is Refresh that publishes the list only when the page
// checked out (err nil): a look taken while the tab navigates does not
// announce the page as empty just before it announces the new one.
func (b *Bridge) refreshQuietly(ctx context.Context) error {
	b.refreshing.Lock()
	defer b.refreshing.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	_, err := b.refreshLocked(ctx)
	if err == nil {
		b.publishLocked(ctx)
	}
	return err
}

// publish publishes the tool list as it is (publishLocked).
func (b *Bridge) publish(ctx context.Context) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.publishLocked(ctx)
}

// refreshLocked is Refresh for a caller that holds b.refreshing and b.mu;
// it lets go of b.mu while the page answers the describe.
func (b *Bridge) refreshLocked(ctx context.Context) (changed bool, err error) {
	if b.browser != nil {
		allowed, err := b.checkPageLocked(ctx)
		if err == nil && !allowed && b.allowed && !b.page.Pling {
			// An allowed page without Pling: its own WebMCP tools, if it
			// has any (webmcp.go).
			return b.setTools(ctx, b.withPageTools(ctx, nil), "", nil), nil
		}
		if err != nil || !allowed {
			// No capabilities here: only the browsing tools stay. Any
			// error of the check counts as not allowed.
			return b.setTools(ctx, nil, "", nil), err
		}
	}
	// The describe runs without b.mu (a page with thousands of rows takes
	// a while): a call meanwhile is checked against the last list and
	// sent at once instead of waiting. Refreshes stay one at a time
	// (b.refreshing, which every caller holds).
	b.mu.Unlock()
	mark := b.readMark(ctx) // before the describe: a change during it moves the mark past this
	d, err := b.client.Describe(ctx, nil)
	b.mu.Lock()
	if err != nil {
		return false, err
	}
	b.described, b.describedAt = mark, time.Now()
	if b.loaded && d.Revision == b.revision && b.desc != nil {
		b.desc = d
		return false, nil
	}
	tools, err := Tools(d)
	if err != nil {
		return false, err
	}
	tools = append(tools, b.unavailableTools(d, tools)...)
	if b.browser != nil {
		tools = b.withPageTools(ctx, tools)
	}
	return b.setTools(ctx, tools, d.Revision, d), nil
}

// checkPageLocked is the page check of a browsing session: which
// document the tab shows (from the browser, when it names documents),
// whether its origin is allowed and whether it speaks Pling. Only a
// document that passes is pinned in the guard; anything else — an error
// included — unpins it, so nothing is sent until a check passes again.
func (b *Bridge) checkPageLocked(ctx context.Context) (allowed bool, err error) {
	b.allowed = false
	if b.docs == nil {
		info, err := b.browser.Info(ctx)
		if err != nil {
			return false, err
		}
		b.page, b.allowed = info, b.allowedURL(info.URL)
		return b.allowed && info.Pling, nil
	}
	fail := func(left string, err error) (bool, error) {
		if b.guard != nil {
			b.guard.unpin(left)
		}
		return false, err
	}
	doc, err := b.docs.Document(ctx)
	if err != nil {
		b.page = PageInfo{}
		return fail("", err)
	}
	// What the page's script says (its title, whether it speaks Pling) is
	// read in between two reads of the document from the browser: a
	// navigation meanwhile fails the check.
	info, err := b.browser.Info(ctx)
	if err != nil {
		b.page = PageInfo{URL: doc.URL}
		return fail(doc.Origin, fmt.Errorf("checking the page at %s: %w", doc.Origin, err))
	}
	again, err := b.docs.Document(ctx)
	if err != nil || !again.Same(doc) {
		b.page = PageInfo{URL: doc.URL}
		return fail("", errors.New("the tab navigated while it was checked"))
	}
	info.URL = again.URL // the browser's, never the script's
	info.Title, _ = cutText(info.Title, MaxTitleLen)
	b.page, b.doc = info, again
	b.allowed = slices.Contains(b.origins, doc.Origin)
	if !b.allowed {
		return fail(doc.Origin, nil)
	}
	if !info.Pling {
		// Allowed, without Pling: pinned for its own WebMCP tools only
		// (the guard sends it no Surface request).
		if b.guard != nil {
			b.guard.pinPage(again)
		}
		return false, nil
	}
	if b.guard != nil {
		b.guard.pin(again)
	}
	return true, nil
}

// dropLocked is what a navigation does at once, before any check: the
// capability tools go, the tab counts as not allowed and the guard sends
// nothing.
func (b *Bridge) dropLocked(ctx context.Context) {
	if b.guard != nil {
		b.guard.navigating()
	}
	b.allowed = false
	b.revision = ""
	b.described = ""
	b.setTools(ctx, nil, "", nil)
}

// readMark is the page's change mark now, "" when the bridge has none or
// it could not be read (then nothing counts as unchanged).
func (b *Bridge) readMark(ctx context.Context) string {
	if b.mark == nil {
		return ""
	}
	m, err := b.mark(ctx)
	if err != nil {
		return ""
	}
	return m
}

// unchanged reports whether the page's change mark is where it was at
// the last describe, which is younger than b.quiet: a look need not
// describe again.
func (b *Bridge) unchanged(ctx context.Context) bool {
	m := b.readMark(ctx)
	if m == "" {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return m == b.described && time.Since(b.describedAt) < b.quiet
}

// listUnchanged reports whether a tools/list can be answered with the
// list the last describe made: the page speaks Pling (a plain WebMCP
// page registers tools without touching its DOM, so it is read each
// time), that describe answered, and the page's change mark has not
// moved since it was read before that describe, within b.quiet
// (unchanged). A navigation moves the mark (it names the document).
func (b *Bridge) listUnchanged(ctx context.Context) bool {
	b.mu.Lock()
	pling := b.loaded && b.desc != nil && b.described != "" && (b.browser == nil || b.allowed && b.page.Pling)
	b.mu.Unlock()
	return pling && b.unchanged(ctx)
}

// setTools makes tools the capability tools: those that left are removed,
// new and changed ones added. The MCP server lists them once they are
// published (publishLocked).
func (b *Bridge) setTools(ctx context.Context, tools []Tool, revision string, d *schema.SurfaceDescription) (changed bool) {
	tools = b.bindNames(ctx, tools)
	tools, dropped := boundTools(tools)
	if dropped > 0 {
		b.log.LogAttrs(ctx, slog.LevelWarn, "pling mcp: the page declares more tools than are offered", slog.Int("dropped", dropped))
	}
	next := make(map[string]toolEntry, len(tools))
	var removed []string
	for _, t := range tools {
		if old, ok := b.tools[t.Tool.Name]; ok && old.placeholder && old.capability == t.Capability {
			next[t.Tool.Name] = old
			continue
		}
		spec, _ := json.Marshal(t.Tool)
		next[t.Tool.Name] = toolEntry{capability: t.Capability, tool: t.Tool, spec: spec, placeholder: t.placeholder, openSchema: t.openSchema}
	}
	for name := range b.tools {
		if _, ok := next[name]; !ok {
			removed = append(removed, name)
		}
	}
	if len(removed) > 0 {
		changed = true
	}
	for _, t := range tools {
		e := next[t.Tool.Name]
		e.handler = t.handler
		next[t.Tool.Name] = e
		if old, ok := b.tools[t.Tool.Name]; !ok || old.capability != t.Capability || !bytes.Equal(old.spec, e.spec) {
			changed = true
		}
	}
	b.tools, b.revision, b.loaded, b.desc = next, revision, true, d
	return changed
}

// publishLocked makes the MCP server list b.tools: the tools that left
// are removed and the new and changed ones added in one burst, which the
// SDK announces with one notifications/tools/list_changed (it waits a
// few milliseconds for more changes). A navigation publishes only once
// the new page checks out (navigated), so the client hears of it once,
// not of each step (the old page's tools gone, then the new page's).
func (b *Bridge) publishLocked(ctx context.Context) {
	var removed []string
	for name := range b.published {
		if _, ok := b.tools[name]; !ok {
			removed = append(removed, name)
		}
	}
	sort.Strings(removed)
	var added []toolEntry
	for name, e := range b.tools {
		if old, ok := b.published[name]; ok && old.capability == e.capability && bytes.Equal(old.spec, e.spec) {
			continue
		}
		added = append(added, e)
	}
	if len(removed) == 0 && len(added) == 0 {
		return
	}
	sort.Slice(added, func(i, j int) bool { return added[i].tool.Name < added[j].tool.Name })
	if len(removed) > 0 {
		b.server.RemoveTools(removed...)
	}
	for _, e := range added {
		h := e.handler
		if h == nil {
			h = b.handler(e.capability)
		}
		b.server.AddTool(e.tool, h)
	}
	b.published = maps.Clone(b.tools)
	b.announce.published(b.published)
	b.log.LogAttrs(ctx, slog.LevelInfo, "pling mcp: tool list changed", slog.String("revision", b.revision),
		slog.Int("tools", len(b.tools)))
}

// Watch looks at the page every interval until ctx is done, for pages
// that change without being invoked, and refreshes the tool list when it
// changed: with a change mark (WithChangeMark), only when the mark moved
// since the last describe or QuietDescribe passed without one; without,
// every time. The first describe failure of a run of them is logged, and
// the describe that works again; the watch goes on. It returns ctx's
// error.
func (b *Bridge) Watch(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if b.unchanged(ctx) {
				continue
			}
			err := b.refreshQuietly(ctx)
			switch {
			case ctx.Err() != nil:
			case err != nil && !failing:
				failing = true
				b.log.LogAttrs(ctx, slog.LevelWarn, "pling mcp: describe failed; retrying quietly", slog.String("error", err.Error()))
			case err == nil && failing:
				failing = false
				b.log.LogAttrs(ctx, slog.LevelInfo, "pling mcp: describe works again")
			}
		}
	}
}
