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
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/modeltool"
	"github.com/pling-go/pling/internal/pagetext"
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

// unavailableTools keeps the capabilities that cannot run now in the tool
// list (docs/agent.md §4.3): one the bridge listed before keeps its tool
// as it was, so a step that only changes what is available costs no new
// list (and no tools/list_changed); one never seen available gets a tool
// that says so, with the page's reason. A call to either is an invoke,
// which the page answers with ACTION_UNAVAILABLE and its reason — not a
// JSON-RPC "unknown tool", which would tell a model the site cannot do it.
func (b *Bridge) unavailableTools(d *schema.SurfaceDescription, listed []Tool) []Tool {
	names := make(map[string]bool, len(listed))
	for _, t := range listed {
		names[t.Tool.Name] = true
	}
	var out []Tool
	for _, u := range d.Context.Unavailable {
		if !listedUnavailable(u) || capabilityOf(d, u.ID) != nil {
			continue // a state's or guide's mistake, not a capability
		}
		name := modeltool.Names([]string{u.ID})[0]
		if names[name] {
			continue
		}
		names[name] = true
		if old, ok := b.tools[name]; ok && old.capability == u.ID && old.tool != nil {
			out = append(out, Tool{Capability: u.ID, Tool: old.tool, placeholder: old.placeholder, openSchema: old.openSchema})
			continue
		}
		in, open := placeholderSchema(u)
		// A result says when it becomes available ("Now available"), so
		// the description need not; one listed without its schema says
		// where its parameters come.
		desc := "Unavailable when listed (" + unavailableReason(u) + ")."
		if open {
			desc += " A result gives its parameters when it can run."
		}
		tool := &sdk.Tool{Name: name, InputSchema: in}
		if u.Title != "" {
			// Listed as it would be when available: its words first,
			// then why it cannot run now, its hints and who is asked.
			c := schema.SurfaceCapability{Title: saidTitle(u.ID, u.Title, u.Description), Description: u.Description, Risk: u.Risk, Approval: u.Approval, Handoff: u.Handoff}
			first := capabilityText(c.Title, c.Description)
			if !strings.HasSuffix(first, ".") {
				first += "."
			}
			desc = withPerson(first+" "+desc, c)
			tool.Title = toolTitle(c.Title, desc)
			tool.Annotations, tool.Meta = riskHints(c.Risk)
		}
		tool.Description = desc
		out = append(out, Tool{Capability: u.ID, placeholder: true, openSchema: open, Tool: tool})
	}
	return out
}

// reasonText says why a capability cannot run: the page's reason,
// bounded and quoted as the page's.
func reasonText(reason string) string {
	if reason == "" {
		return "not available now; the page gave no reason"
	}
	r, _ := cutText(strings.TrimSuffix(reason, "."), MaxDescriptionLen)
	return "the page's reason: " + pagetext.Quote(r)
}

// placeholderSchema is the input schema of a capability listed while it
// cannot run: its own, as the page described it (with the "record"
// parameter of a row action, "base@kind"), else an open object (open).
func placeholderSchema(u schema.Unavailable) (in json.RawMessage, open bool) {
	if u.InputSchema == nil {
		return json.RawMessage(`{"type":"object"}`), true
	}
	var record *schema.PropertySchema
	if _, kind, ok := strings.Cut(u.ID, "@"); ok {
		record = &schema.PropertySchema{Type: "string", Description: fmt.Sprintf("The %s's id or label", kind)}
	}
	b, err := schema.Encode(toolSchema(*u.InputSchema, record))
	if err != nil {
		return json.RawMessage(`{"type":"object"}`), true
	}
	return b, false
}

// unavailableNow is what the page said cannot run, by capability id, with
// its reason, as of the last describe.
func (b *Bridge) unavailableNow() map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]string{}
	if b.desc == nil {
		return out
	}
	for _, u := range b.desc.Context.Unavailable {
		if listedUnavailable(u) {
			out[u.ID] = unavailableReason(u)
		}
	}
	return out
}

// listedUnavailable reports whether u is a capability that cannot run
// now, which the tool list and browser.page keep with its reason: one
// that waits (no code), or two declarations in conflict under its id
// (DUPLICATE_ACTION_ID), so that a capability never vanishes silently.
func listedUnavailable(u schema.Unavailable) bool {
	return u.Code == "" || u.Code == string(perr.DuplicateActionID)
}

// unavailableReason says why u cannot run: the page's reason, quoted as
// the page's (reasonText), or, for a capability the runtime holds back
// with a code (two declarations under one id), the runtime's own reason
// and its code.
func unavailableReason(u schema.Unavailable) string {
	if u.Code == "" {
		return reasonText(u.Reason)
	}
	return strings.TrimSuffix(stdcmpOr(u.Reason, "Not available now"), ".") + " (" + u.Code + ")"
}

// availabilityText says which tools became available or unavailable
// between before and after (each by capability id), for a result's text:
// the list itself stays as it was.
func (b *Bridge) availabilityText(before, after map[string]string) string {
	var gone, back []string
	for id, reason := range after {
		if _, ok := before[id]; !ok {
			gone = append(gone, id+" ("+reason+")")
		}
	}
	b.mu.Lock()
	listed := b.desc
	placeholders := map[string]toolEntry{}
	for _, e := range b.tools {
		if e.placeholder {
			placeholders[e.capability] = e
		}
	}
	b.mu.Unlock()
	var specs []Tool
	if listed != nil {
		specs, _ = Tools(listed)
	}
	for id := range before {
		if _, ok := after[id]; !ok && capabilityOf(listed, id) != nil {
			back = append(back, id+parametersOf(specs, id, placeholders[id]))
		}
	}
	sort.Strings(gone)
	sort.Strings(back)
	var t strings.Builder
	if len(gone) > 0 {
		t.WriteString("\nNow unavailable: " + strings.Join(gone, "; "))
	}
	if len(back) > 0 {
		t.WriteString("\nNow available: " + strings.Join(back, "; "))
	}
	return t.String()
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

// Tool is one capability as an MCP tool.
type Tool struct {
	Tool       *sdk.Tool
	Capability string
	// handler, when set, answers instead of an invoke of Capability: a
	// page's own WebMCP tool (webmcp.go).
	handler sdk.ToolHandler

	placeholder bool // listed while unavailable (unavailableTools)
	openSchema  bool // … with an open input schema (placeholderSchema)
}

// MetaUntrusted is the _meta key of a tool whose output carries the page's
// data, which its users may have written (a read): WebMCP's
// untrustedContentHint, which MCP's annotations lack.
const MetaUntrusted = "pling/untrustedContentHint"

// Tools renders a description's capabilities as MCP tools, in capability
// order, named and shaped as modeltool.List renders them in the page.
func Tools(d *schema.SurfaceDescription) ([]Tool, error) {
	out := make([]Tool, 0, len(d.Capabilities))
	ids := make([]string, len(d.Capabilities))
	for i, c := range d.Capabilities {
		ids[i] = c.ID
	}
	names := modeltool.Names(ids)
	byID := make(map[string]string, len(ids))
	for i, id := range ids {
		byID[id] = names[i]
	}
	for i, c := range d.Capabilities {
		name := names[i]
		c.Title = saidTitle(c.ID, c.Title, c.Description)
		desc := capabilityText(c.Title, c.Description)
		params := toolSchema(c.InputSchema, nil)
		if c.Record != nil {
			params = toolSchema(c.InputSchema, &schema.PropertySchema{Type: "string", Description: recordParam(d, c)})
			if !strings.HasSuffix(desc, ".") {
				desc += "."
			}
			desc += " " + recordRule(d, c, byID)
		}
		desc = withPerson(desc, c)
		in, err := schema.Encode(params)
		if err != nil {
			return nil, fmt.Errorf("pling mcp: input schema of %s: %w", c.ID, err)
		}
		ann, meta := riskHints(c.Risk)
		out = append(out, Tool{Capability: c.ID, Tool: &sdk.Tool{
			Meta:        meta,
			Name:        name,
			Title:       toolTitle(c.Title, desc),
			Description: desc,
			InputSchema: json.RawMessage(in),
			Annotations: ann,
		}})
	}
	return out, nil
}

// riskHints are a tool's annotations for its risk. MCP reads a missing
// destructiveHint as true, so a write that is not destructive says false,
// and a read-only tool (where the hint means nothing) says nothing.
func riskHints(risk schema.Risk) (*sdk.ToolAnnotations, sdk.Meta) {
	ann := &sdk.ToolAnnotations{ReadOnlyHint: risk == schema.RiskRead}
	if !ann.ReadOnlyHint {
		destructive := risk == schema.RiskDestructive
		ann.DestructiveHint = &destructive
		return ann, nil
	}
	// A read's output is the page's data, which its users may have
	// written: MCP has no untrusted-content hint, so the nearest it has
	// (openWorldHint: the tool reaches entities outside the client's
	// closed world) and WebMCP's own hint under the bridge's _meta prefix
	// (RATIONALE.md).
	open := true
	ann.OpenWorldHint = &open
	return ann, sdk.Meta{MetaUntrusted: true}
}

// toolTitle is a tool's title for a client's display (MCP Tool.title),
// unless the description begins with it, as it does when the page wrote
// one: the model reads it there and a client shows the name.
func toolTitle(title, desc string) string {
	title, _ = cutText(title, MaxTitleLen)
	if titleSaid(title, desc) {
		return ""
	}
	return pagetext.Escape(title)
}

// toolSchema is a capability's input schema as its tool lists it: an
// object, with a required "record" parameter first for a row action, and
// without "additionalProperties": false, written on every tool: the page
// checks the arguments against its own schema and answers an unknown one
// with INVALID_PARAMS, which the model reads.
func toolSchema(in schema.JSONSchema, record *schema.PropertySchema) schema.JSONSchema {
	in.Type = "object"
	in.AdditionalProperties = nil
	if record != nil {
		props := make(map[string]*schema.PropertySchema, len(in.Properties)+1)
		for k, v := range in.Properties {
			props[k] = v
		}
		props["record"] = record
		in.Properties = props
		in.Required = append([]string{"record"}, in.Required...)
	}
	return in
}

// handler is the tool handler of one capability: an invoke through the
// client.
func (b *Bridge) handler(capability string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if req.Params.RequestState != "" {
			// The host answered the approval screen it was asked to open.
			return b.resumeCall(ctx, req, capability)
		}
		input, ok := arguments(req.Params.Arguments)
		if !ok {
			e := perr.New(perr.InvalidArgs, "The arguments are not one JSON object", nil)
			return businessResult(&agent.BusinessError{Code: e.Code(), Message: e.Message(), Capability: capability}), nil
		}
		var note string
		rec, _ := input["record"].(string)
		failed, _, deferred := b.resolveRecord(ctx, capability, input, &note, false)
		if failed != nil {
			return failed, nil
		}
		if b.screen == "" || !urlElicitation(req.Session) {
			return b.invokeTool(ctx, ctx, req, capability, input, rec, note, deferred, nil)
		}
		return b.invokeAskingHost(ctx, req, capability, input, rec, note, deferred)
	}
}

// invokeTool is one tool call's invoke: through ictx, and what follows it
// (the tool list, the navigation, the result) through ctx. With pc (the
// host may be asked to open the approval screen), the page's notice that
// its authority holds the approval goes to pc.screens, and a call the
// person declined in the host ends saying so.
func (b *Bridge) invokeTool(ctx, ictx context.Context, req *sdk.CallToolRequest, capability string, input map[string]any,
	rec, note string, deferred bool, pc *pendingCall) (*sdk.CallToolResult, error) {
	var opts []agent.InvokeOption
	token := req.Params.GetProgressToken()
	if (token != nil || pc != nil) && req.Session != nil {
		n := 0.0
		opts = append(opts, agent.OnWaiting(func(w agent.Waiting) {
			if w.Approval != "" {
				if pc != nil {
					pc.screen(w)
				}
				return // it follows the waiting notice of the same approval
			}
			if token == nil {
				return
			}
			// The host asked for progress: say when the page asks a
			// person, so the call is not taken for stuck.
			n++
			err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token,
				Message: WaitingMessage(w), Progress: n})
			if err != nil {
				b.log.LogAttrs(ctx, slog.LevelWarn, "pling mcp: progress notification failed", slog.String("error", err.Error()))
			}
		}))
	}
	before := b.unavailableNow()
	mark := b.markNav()
	res, err := b.client.Invoke(ictx, capability, input, opts...)
	if pc != nil && err != nil {
		if action, _ := pc.declined.Load().(string); action != "" {
			if r, ok := declinedResult(capability, action, err); ok {
				return r, nil
			}
		}
	}
	if deferred && recordRefused(err) {
		// The page refused a record the last describe did not list:
		// look at every record now (a describe), as the call did not
		// before it went, and send it again if that brought the
		// record into view.
		failed, revealed, _ := b.resolveRecord(ctx, capability, input, &note, true)
		if failed != nil {
			return failed, nil
		}
		if revealed {
			res, err = b.client.Invoke(ictx, capability, input, opts...)
		}
	}
	if err == nil && note == "" && res.Evidence != nil && rec != "" && res.Evidence.Record != "" && res.Evidence.Record != rec {
		note = rec + " is " + res.Evidence.Record // a label the page resolved
	}
	b.follow(ctx, res, err)
	var to string
	var tools []string
	if b.browser != nil {
		to, tools = b.followNavigation(ctx, mark)
		b.publish(ctx) // what the look after the invoke saw, if it did not publish
	}
	avail := ""
	if to == "" {
		avail = b.availabilityText(before, b.unavailableNow()) + b.toolsText(mark.names)
	}
	if err == nil {
		r := successResult(res, note, b.handOver(req.Session, res.Value, maxValueText))
		r.Content[0].(*sdk.TextContent).Text += avail
		b.markToolsChanged(r, mark.names, to)
		navigationText(r, to, tools)
		b.takeDownloads(ctx, req.Session, r)
		return r, nil
	}
	var ue *agent.UnconfirmedError
	if errors.As(err, &ue) {
		r := unconfirmedResult(ue)
		navigationText(r, to, tools)
		return r, nil
	}
	var be *agent.BusinessError
	if errors.As(err, &be) {
		r := businessResult(be)
		r.Content[0].(*sdk.TextContent).Text += avail
		b.markToolsChanged(r, mark.names, to)
		navigationText(r, to, tools)
		if note != "" && be.Code == perr.ActionNotFound {
			// The record does not exist; the page did not change: say
			// so, with what an id and a label look like, in place of
			// the registry's "describe again".
			r.Content[0].(*sdk.TextContent).Text = string(be.Code) + ": " + note
		}
		return r, nil
	}
	return nil, rpcError(err)
}

// WaitingMessage is the progress message of a Waiting notice, for people:
// "Waiting for a person to approve refund@order (up to 5m0s)".
func WaitingMessage(w agent.Waiting) string {
	what := "approve"
	if w.Kind == "handoff" {
		what = "finish their part of"
	}
	return fmt.Sprintf("Waiting for a person to %s %s (up to %v)", what, pagetext.Line(w.Capability, 200), w.Timeout)
}

// follow refreshes the tool list when an invoke says the page changed.
func (b *Bridge) follow(ctx context.Context, res *agent.Result, err error) {
	var obs *schema.SurfaceObservation
	stale := false
	if res != nil {
		obs = res.Observation
	}
	var be *agent.BusinessError
	if errors.As(err, &be) {
		obs = be.Observation
		stale = be.Recovery() == perr.RecoverDescribe
	}
	var pe *agent.ProtocolError
	if errors.As(err, &pe) && pe.Recovery() == perr.RecoverDescribe {
		stale = true
	}
	if obs != nil && (obs.CapabilitiesChanged || obs.Revision != b.Revision()) {
		stale = true
	}
	if !stale {
		return
	}
	if err := b.refreshQuietly(ctx); err != nil {
		b.log.LogAttrs(ctx, slog.LevelWarn, "pling mcp: describe after invoke failed", slog.String("error", err.Error()))
	}
}

// arguments reads tool-call arguments: absent or null is {}; anything but
// one JSON object is not accepted (INVALID_ARGS, docs/protocol.md §4.2).
func arguments(raw json.RawMessage) (map[string]any, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return map[string]any{}, true
	}
	d := json.NewDecoder(bytes.NewReader(t))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil || d.More() {
		return nil, false
	}
	return m, true
}

// successResult is a success as a tool result: the short account as text,
// and a lean structuredContent for programs — the value, the evidence
// (expectations without the values the changed states already carry), the
// states that changed, the page's feedback, where it went and whether its
// tools changed (the new list itself comes with tools/list_changed). The
// request id and the revision stay out: a model cannot use them through
// MCP, and the bridge resends and re-describes by itself.
func successResult(r *agent.Result, note string, h *handover) *sdk.CallToolResult {
	sc := map[string]any{}
	if r.Value != nil {
		sc["value"] = r.Value
	}
	var changed map[string]schema.StateChange
	if o := r.Observation; o != nil {
		changed = o.States
		addObservation(sc, o)
	}
	if e := leanEvidence(r.Evidence, changed); e != nil {
		sc["evidence"] = e
	}
	// note (a label read as an id, a row brought into view) is for the
	// model, in the text; evidence.record has the id for programs.
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: successText(r, note, h)}}, StructuredContent: sc}
	h.apply(res)
	return res
}

// addObservation puts what an observation says a model needs into sc:
// changed states, feedback, the navigation's target, toolsChanged.
func addObservation(sc map[string]any, o *schema.SurfaceObservation) {
	if len(o.States) > 0 {
		sc["changed"] = o.States
	}
	if len(o.Feedback) > 0 {
		sc["feedback"] = o.Feedback
	}
	if o.Navigation != nil && o.Navigation.To != "" {
		sc["navigatedTo"] = o.Navigation.To
	}
	if o.CapabilitiesChanged {
		sc["toolsChanged"] = true
	}
}

// evidence is schema.Evidence without the capability (the model called
// the tool) and with each expectation's before and after only when the
// changed states do not carry them.
type evidence struct {
	Record       string        `json:"record,omitempty"`
	Records      []string      `json:"records,omitempty"`
	Expectations []expectation `json:"expectations,omitempty"`
	Steps        int           `json:"steps,omitempty"`
	Handoff      string        `json:"handoff,omitempty"`
	Approval     string        `json:"approval,omitempty"`
	Summary      string        `json:"summary,omitempty"`
}

type expectation struct {
	State     string `json:"state"`
	Condition string `json:"condition"`
	Before    any    `json:"before,omitempty"`
	After     any    `json:"after,omitempty"`
	Met       bool   `json:"met"`
}

func leanEvidence(e *schema.Evidence, changed map[string]schema.StateChange) *evidence {
	if e == nil {
		return nil
	}
	out := &evidence{Record: e.Record, Records: e.Records, Steps: e.Steps, Handoff: e.Handoff, Approval: e.Approval}
	if !strings.HasSuffix(e.Summary, " ran") {
		out.Summary = e.Summary
	}
	for _, x := range e.Expectations {
		ex := expectation{State: x.State, Condition: x.Condition, Met: x.Met}
		if _, ok := changed[x.State]; !ok {
			ex.Before, ex.After = x.Before, x.After
		}
		out.Expectations = append(out.Expectations, ex)
	}
	return out
}

// businessResult is a business failure as a tool result with isError: the
// code first, then the message and the registry's next step for people.
// Its structuredContent is the failure, the recovery and the states the
// client observed — not the whole description it observed: recovery
// "describe" says to look again, and the tool list follows by itself
// (tools/list_changed).
func businessResult(e *agent.BusinessError) *sdk.CallToolResult {
	failure := map[string]any{"code": string(e.Code), "message": e.Message}
	if len(e.Details) > 0 {
		failure["details"] = e.Details
	}
	if e.Resume != "" {
		failure["resume"] = e.Resume
	}
	sc := map[string]any{"error": failure}
	if rec := e.Recovery(); rec != perr.RecoverNone {
		sc["recovery"] = rec.String() // "describe": look again; the tool list follows by itself
	}
	if e.Observation != nil {
		addObservation(sc, e.Observation)
	}
	if e.Observed != nil && len(e.Observed.Context.States) > 0 {
		sc["states"] = e.Observed.Context.States
	}
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: failureText(e)}}, StructuredContent: sc}
}

// rpcError is a protocol failure as a JSON-RPC error: data carries the
// Surface code, so a program branches on it, never on the message.
func rpcError(err error) error {
	data := map[string]any{}
	var ue *agent.UnconfirmedError
	var pe *agent.ProtocolError
	var ns *agent.NotSentError
	switch {
	case errors.As(err, &ns):
		data["notSent"] = true
		data["requestId"] = ns.RequestID
	case errors.As(err, &ue):
		data["unconfirmed"] = true
		data["requestId"] = ue.RequestID
		if ue.Protocol != nil {
			data["code"] = string(ue.Protocol.Code)
		}
	case errors.As(err, &pe):
		data["code"] = string(pe.Code)
		data["message"], _ = cutText(pagetext.EscapeText(pe.Message), MaxDescriptionLen)
		if pe.RetryAfterMs > 0 {
			data["retryAfterMs"] = pe.RetryAfterMs
		}
		if len(pe.Details) > 0 {
			data["details"] = pe.Details
		}
		if pe.RequestID != "" {
			data["requestId"] = pe.RequestID
		}
	default:
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: errorText(err)}
	}
	raw, _ := schema.Encode(data)
	return &jsonrpc.Error{Code: CodeSurfaceFailure, Message: errorText(err), Data: raw}
}

// errorText is an error's text as a JSON-RPC error's message, which may
// carry the page's words (a protocol failure's message): escaped
// (pagetext.EscapeText) and cut to MaxDescriptionLen characters.
func errorText(err error) string {
	t, _ := cutText(pagetext.EscapeText(err.Error()), MaxDescriptionLen)
	return t
}

// parametersOf is " (DESCRIPTION Parameters: {…})" for a capability
// whose listed tool is a placeholder: the list does not change when it
// becomes available, so the result gives what the list would not — its
// description, unless the placeholder was listed with the page's words
// already, and its parameters unless the placeholder has them.
func parametersOf(specs []Tool, id string, listed toolEntry) string {
	if !listed.placeholder {
		return ""
	}
	for _, t := range specs {
		if t.Capability != id {
			continue
		}
		var parts []string
		if listed.tool == nil || !strings.HasPrefix(listed.tool.Description, "From the page: ") {
			parts = append(parts, t.Tool.Description)
		}
		if listed.openSchema {
			parts = append(parts, "Parameters: "+string(t.Tool.InputSchema.(json.RawMessage)))
		}
		if len(parts) == 0 {
			return ""
		}
		return " (" + strings.Join(parts, " ") + ")"
	}
	return ""
}

// withPerson says, in a tool's description, that a call waits for a
// person: the page asks them to approve it, or hands the work over to
// them. Such a call takes minutes, not milliseconds, and may end with
// their refusal.
func withPerson(desc string, c schema.SurfaceCapability) string {
	var s string
	switch {
	case c.Approval && c.Handoff:
		s = "A person approves each call in the browser, then finishes it there: it waits for them (minutes)."
	case c.Approval:
		s = "A person approves each call in the browser: it waits for them (minutes), and fails if they refuse."
	case c.Handoff:
		s = "A person finishes it in the browser: it waits for them (minutes)."
	default:
		return desc
	}
	if desc != "" && !strings.HasSuffix(desc, ".") {
		desc += "."
	}
	return strings.TrimSpace(desc + " " + s)
}

// known reports whether name is a tool the bridge lists now.
func (b *Bridge) known(name string) bool {
	if b.browser != nil && strings.HasPrefix(name, "browser.") {
		return true // the SDK answers a misspelt browser tool itself
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.tools[name]
	return ok
}

// unknownTool answers a call of a tool the page does not offer (now): a
// result a model reads — which page it is on and what to do — rather
// than a JSON-RPC "unknown tool", which reads as "the site cannot do it".
func (b *Bridge) unknownTool(name string) *sdk.CallToolResult {
	b.mu.Lock()
	url := b.page.URL
	b.mu.Unlock()
	msg := fmt.Sprintf("This page has no tool %q: it belonged to a page the tab has left, or was never listed.", name)
	next := "list the tools again and call one of them."
	if b.browser != nil {
		if url != "" {
			msg = fmt.Sprintf("This page (%s) has no tool %q: it belonged to a page the tab has left, or was never listed.", url, name)
		}
		next = "call browser.page to see this page's tools, or browser.open the page that has it."
	}
	return &sdk.CallToolResult{IsError: true,
		Content:           []sdk.Content{&sdk.TextContent{Text: string(perr.ActionNotFound) + ": " + msg + " Next: " + next}},
		StructuredContent: map[string]any{"error": map[string]any{"code": string(perr.ActionNotFound), "message": msg}}}
}

// unconfirmedResult is a call whose outcome is unknown — the page's
// handler did not finish in time, or its answer was lost — as a tool
// result a model reads: the Surface code (INTERNAL_ERROR when the page
// sent none), that the effect is unknown, and the one next step: look,
// do not repeat. Not a JSON-RPC error: -32001 is also what an SDK uses
// for its own timeout, and a host shows a model little of an error's
// data.
func unconfirmedResult(ue *agent.UnconfirmedError) *sdk.CallToolResult {
	code := perr.InternalError
	why := "the page's code did not finish, or its answer was lost"
	if ue.Protocol != nil {
		code = ue.Protocol.Code
		if m := strings.TrimSuffix(strings.TrimSpace(ue.Protocol.Message), "."); m != "" {
			why = m
		}
	} else if ue.Cause != nil && (errors.Is(ue.Cause, context.DeadlineExceeded) || strings.Contains(ue.Cause.Error(), "deadline")) {
		why = "the page's code did not finish in time"
	} else if big := (*cdp.AnswerTooLarge)(nil); errors.As(ue.Cause, &big) {
		why = big.Error()
	}
	msg := fmt.Sprintf("%s: whether %s ran is unknown (%s).", code, ue.Capability, why)
	failure := map[string]any{"code": string(code), "message": why}
	return &sdk.CallToolResult{IsError: true,
		Content: []sdk.Content{&sdk.TextContent{Text: msg + " Next: do not call it again; look at the page " +
			"(browser.page, or a read tool) to see whether it happened."}},
		StructuredContent: map[string]any{"error": failure, "unconfirmed": true, "requestId": ue.RequestID, "recovery": "observe"}}
}

// toolsText says, for a result, that the tool list changed during the
// call (capabilities came or went): "The tool list changed: new x; gone
// y." Nothing when it did not — availability alone leaves it as it was.
func (b *Bridge) toolsText(before []string) string {
	b.mu.Lock()
	now := b.toolNamesLocked()
	b.mu.Unlock()
	var added, gone []string
	for _, n := range now {
		if !slices.Contains(before, n) {
			added = append(added, n)
		}
	}
	for _, n := range before {
		if !slices.Contains(now, n) {
			gone = append(gone, n)
		}
	}
	if len(added) == 0 && len(gone) == 0 {
		return ""
	}
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "new "+strings.Join(added, ", "))
	}
	if len(gone) > 0 {
		parts = append(parts, "gone "+strings.Join(gone, ", "))
	}
	return "\nThe tool list changed: " + strings.Join(parts, "; ") + "."
}

// markToolsChanged makes structuredContent.toolsChanged say whether the
// list changed in the call, not whether the page's capabilities did.
func (b *Bridge) markToolsChanged(r *sdk.CallToolResult, before []string, to string) {
	sc, _ := r.StructuredContent.(map[string]any)
	if sc == nil || to != "" {
		return // a navigation says it itself
	}
	b.mu.Lock()
	now := b.toolNamesLocked()
	b.mu.Unlock()
	if slices.Equal(now, before) {
		delete(sc, "toolsChanged")
	} else {
		sc["toolsChanged"] = true
	}
}
