package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent/cdp"
	"github.com/pling-go/pling/internal/pagetext"
	"github.com/pling-go/pling/schema"
)

// A browsing session: with WithBrowser the bridge works on a browser tab,
// not one page. The browser.* tools open a URL (on the allowed origins
// only), go back, list and switch tabs and say where the session is; the
// capability tools follow the current page. Their names have a '.', which
// modeltool.Names never writes (it maps '.' to '_'), so no capability
// can take them.

// PageInfo is what the current tab shows.
type PageInfo = cdp.PageInfo

// Tab is one tab of the browser.
type Tab = cdp.Tab

// Browser is the browsing session a bridge drives; *cdp.Page is one.
type Browser interface {
	Info(ctx context.Context) (PageInfo, error)
	Navigate(ctx context.Context, url string) (PageInfo, error)
	Back(ctx context.Context) (PageInfo, error)
	Tabs(ctx context.Context) ([]Tab, error)
	SwitchTab(ctx context.Context, id string) (PageInfo, error)
	Outline(ctx context.Context, maxBytes int) (string, error)
	// OnNavigate registers a function called when the current page
	// changes, whoever changed it.
	OnNavigate(func())
	// WebMCPTools lists the tools doc registered with WebMCP (the
	// browser's document.modelContext, or a polyfill's), read in doc's
	// own script context; ExecuteWebMCP calls one there, only while the
	// tab still shows doc (webmcp.go).
	WebMCPTools(ctx context.Context, doc Document) ([]cdp.WebMCPTool, error)
	ExecuteWebMCP(ctx context.Context, doc Document, name string, args json.RawMessage) (string, error)
}

// WithBrowser makes the bridge work on a browsing session: the client's
// transport must send to the page b shows now. origins are the origins
// (scheme://host[:port]) the session may open and whose pages' tools it
// offers; a page elsewhere (reached by a link or a redirect) is reported,
// without its tools.
func WithBrowser(b Browser, origins ...string) Option {
	return func(o *options) {
		o.browser = b
		for _, s := range origins {
			if or, err := Origin(s); err == nil {
				o.origins = append(o.origins, or)
			}
		}
	}
}

// Origin is the origin of a URL: scheme://host[:port], lower case, the
// default port left out (as the browser's security origin).
func Origin(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http(s) URL", raw)
	}
	host := strings.ToLower(u.Host)
	// As the browser spells an origin: the scheme's default port left out.
	if (u.Scheme == "http" && strings.HasSuffix(host, ":80")) || (u.Scheme == "https" && strings.HasSuffix(host, ":443")) {
		host = host[:strings.LastIndexByte(host, ':')]
	}
	return strings.ToLower(u.Scheme) + "://" + host, nil
}

func (b *Bridge) allowedURL(raw string) bool {
	o, err := Origin(raw)
	return err == nil && slices.Contains(b.origins, o)
}

// maxOutline bounds the outline of a page without Pling.
const maxOutline = 2000

// maxInView bounds the labels browser.page lists per record kind.
const maxInView = 30

func (b *Bridge) addBrowserTools() {
	obj := func(props map[string]any, required ...string) json.RawMessage {
		// No "additionalProperties": false: the SDK does not validate a
		// low-level tool's arguments, and browserTool reads only its own.
		m := map[string]any{"type": "object"}
		if len(props) > 0 {
			m["properties"] = props
		}
		if len(required) > 0 {
			m["required"] = required
		}
		raw, _ := json.Marshal(m)
		return raw
	}
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true}
	// A navigation is neither read-only nor idempotent, and MCP reads
	// missing hints that way: no annotations, as on the wire they would
	// only say the defaults.
	var nav *sdk.ToolAnnotations
	// Switching tabs is opening one: browser.open takes a tab, and
	// browser.page lists the tabs when there are several. Two tools of
	// their own cost every tools/list 270 B (RATIONALE.md).
	b.server.AddTool(&sdk.Tool{Name: "browser.open", Annotations: nav,
		Description: "Opens a URL or path on " + strings.Join(b.origins, ", ") + ", or a tab.",
		InputSchema: obj(map[string]any{"url": map[string]any{"type": "string"}, "tab": map[string]any{"type": "string"}})},
		b.browserTool(func(ctx context.Context, in map[string]string) (*sdk.CallToolResult, error) {
			if tab := in["tab"]; tab != "" && in["url"] == "" {
				if _, err := b.browser.SwitchTab(ctx, tab); err != nil {
					return browserError("NO_SUCH_TAB", err.Error(), "browser.page lists the tabs."), nil
				}
				return b.pageResult(ctx, false)
			}
			if in["url"] == "" {
				return browserError("INVALID_ARGS", "browser.open needs a url, or a tab.", "pass url (or tab)."), nil
			}
			target, err := b.resolveURL(in["url"])
			if err != nil {
				return browserError("BAD_URL", err.Error(), "give an http(s) URL or a path such as /shop/."), nil
			}
			if !b.allowedURL(target) {
				return browserError("ORIGIN_NOT_ALLOWED", fmt.Sprintf("%s is outside the sites this session may open (%s).", target, strings.Join(b.origins, ", ")),
					"open a URL on those sites (the person may add one with pling mcp --allow-origin)."), nil
			}
			if _, err := b.browser.Navigate(ctx, target); err != nil {
				return nil, err
			}
			return b.pageResult(ctx, false)
		}))
	b.server.AddTool(&sdk.Tool{Name: "browser.back", Annotations: nav,
		Description: "Goes back.",
		InputSchema: obj(map[string]any{})},
		b.browserTool(func(ctx context.Context, _ map[string]string) (*sdk.CallToolResult, error) {
			if _, err := b.browser.Back(ctx); err != nil {
				return nil, err
			}
			return b.pageResult(ctx, false)
		}))
	b.server.AddTool(&sdk.Tool{Name: "browser.page", Annotations: ro,
		Description: "The tab's URL, tools, rows, links, tabs.",
		InputSchema: obj(map[string]any{})},
		b.browserTool(func(ctx context.Context, _ map[string]string) (*sdk.CallToolResult, error) {
			return b.pageResult(ctx, true)
		}))
}

// writeTabs lists the tabs (* the current one) when there are several:
// browser.open {tab} switches to one.
func (b *Bridge) writeTabs(ctx context.Context, t *strings.Builder, sc map[string]any) {
	tabs, err := b.browser.Tabs(ctx)
	if err != nil || len(tabs) < 2 {
		return
	}
	t.WriteString("\nTabs (browser.open a tab):")
	for _, tab := range tabs {
		mark := " "
		if tab.Current {
			mark = "*"
		}
		fmt.Fprintf(t, "\n%s %s %s %s", mark, pagetext.Line(tab.ID, 64), quoteCut(tab.Title, MaxTitleLen), pagetext.Line(tab.URL, maxURLText))
	}
	sc["tabs"] = tabs
}

func first(s []string) string {
	if len(s) == 0 {
		return "https://example.com"
	}
	return s[0]
}

// browserTool adapts a browsing tool: string arguments in; a failure of
// the browser is a tool error with the next step.
func (b *Bridge) browserTool(f func(ctx context.Context, in map[string]string) (*sdk.CallToolResult, error)) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args, ok := arguments(req.Params.Arguments)
		if !ok {
			return browserError("INVALID_ARGS", "The arguments are not one JSON object.", "pass an object."), nil
		}
		in := map[string]string{}
		for k, v := range args {
			s, ok := v.(string)
			if !ok {
				return browserError("INVALID_ARGS", k+" must be a string.", "pass it as a string."), nil
			}
			in[k] = s
		}
		res, err := f(ctx, in)
		if err != nil {
			return browserError("BROWSER_FAILED", err.Error(), "call browser.page to see where the session is."), nil
		}
		return res, nil
	}
}

// browserError is a browsing tool's failure: a code of its own (these
// are no Surface codes), the message and the next step, on one line.
func browserError(code, msg, next string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: code + ": " + msg + " Next: " + next}},
		StructuredContent: map[string]any{"error": map[string]any{"code": code, "message": msg}}}
}

// resolveURL reads a URL the agent gave, relative to the current page.
func (b *Bridge) resolveURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || raw == "" {
		return "", fmt.Errorf("%q is not a URL", raw)
	}
	b.mu.Lock()
	base := b.page.URL
	b.mu.Unlock()
	if !u.IsAbs() {
		bu, err := url.Parse(base)
		if err != nil || bu.Host == "" {
			bu, _ = url.Parse(first(b.origins))
		}
		u = bu.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%q is not an http(s) URL", raw)
	}
	return u.String(), nil
}

// navigated follows a navigation of the session's page: the tool list is
// rebuilt from the new page (the SDK sends tools/list_changed).
func (b *Bridge) navigated() {
	ctx := context.Background()
	if b.guard != nil {
		b.guard.navigating() // first, without waiting for a refresh under way
	}
	b.refreshing.Lock()
	defer b.refreshing.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dropLocked(ctx) // at once: the tools of the page that was go with it
	if _, err := b.refreshLocked(ctx); err != nil {
		// The page is still on its way (or broken): the client hears of
		// the change when it checks out, or at its next tools/list.
		b.log.LogAttrs(ctx, slog.LevelDebug, "pling mcp: describing the page after a navigation failed", slog.String("error", err.Error()))
		return
	}
	b.publishLocked(ctx)
}

// pageResult refreshes the tools from the current page and says what it
// is. Only the whole view (full: browser.page) lists links and landmarks
// the agent was already told of; after a navigation the same ones are one
// short line.
func (b *Bridge) pageResult(ctx context.Context, full bool) (*sdk.CallToolResult, error) {
	b.refreshing.Lock()
	b.mu.Lock()
	b.revision = ""
	_, err := b.refreshLocked(ctx)
	b.publishLocked(ctx)
	info, allowed, d := b.page, b.allowed, b.desc
	names := make([]string, 0, len(b.tools))
	toolOf := make(map[string]string, len(b.tools)) // capability → tool name
	for n, e := range b.tools {
		names = append(names, n)
		toolOf[e.capability] = n
	}
	b.mu.Unlock()
	b.refreshing.Unlock()
	if err != nil && info.URL == "" {
		return nil, err
	}
	sort.Strings(names)
	sc := map[string]any{"page": map[string]any{"url": info.URL, "title": info.Title, "pling": info.Pling, "allowed": allowed}}
	var t strings.Builder
	fmt.Fprintf(&t, "Page: %s %s", quoteCut(info.Title, MaxTitleLen), pagetext.Line(info.URL, maxURLText))
	switch {
	case !allowed && err != nil && b.allowedURL(info.URL):
		// On an allowed site, but the check failed: fail closed.
		fmt.Fprintf(&t, "\nThe page could not be checked (%v): its tools are not offered, and nothing is sent to it. Next: browser.page again, or browser.back.", err)
	case !allowed:
		fmt.Fprintf(&t, "\nThe tab left the allowed sites. Outside the sites this session may use (%s): its tools are not offered. Next: browser.back, or browser.open a URL on those sites.", strings.Join(b.origins, ", "))
	case !info.Pling || err != nil:
		if err != nil {
			fmt.Fprintf(&t, "\nIt speaks Pling but could not be described: %v", err)
		} else if len(names) > 0 {
			fmt.Fprintf(&t, "\nIt does not speak Pling. Its own WebMCP tools (the page's words, not checked by Pling): %s. Its outline:", strings.Join(names, ", "))
		} else {
			hint := ""
			if _, ok := b.browser.(Viewer); ok {
				hint = " (browser.view to act on it)"
			}
			t.WriteString("\nIt does not speak Pling: no page tools" + hint + ". Its outline:")
		}
		b.mu.Lock()
		b.seenNav = "" // the next page's links are said again, not "as before"
		b.mu.Unlock()
		if out, oerr := b.browser.Outline(ctx, maxOutline); oerr == nil {
			t.WriteString("\n" + strings.TrimSuffix(out, "\n"))
			sc["outline"] = out
		}
	default:
		// The names are for the model to read; the tools themselves come
		// with tools/list (list_changed), so structuredContent leaves them
		// out, and the labels in view too.
		fmt.Fprintf(&t, "\nSpeaks Pling. Tools: %s", strings.Join(names, ", "))
		if d != nil {
			records := map[string]any{}
			kinds := make([]string, 0, len(d.Context.Records))
			for k := range d.Context.Records {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			for _, k := range kinds {
				set := d.Context.Records[k]
				var inView []string
				for _, it := range set.Items {
					if !it.Offscreen && len(inView) < maxInView {
						inView = append(inView, quoteCut(stdcmpOr(it.Label, it.ID), maxLabelText))
					}
				}
				fmt.Fprintf(&t, "\nRecords %s: %d; in view: %s", pagetext.Line(k, 64), set.Total, strings.Join(inView, ", "))
				records[k] = map[string]any{"total": set.Total, "inView": len(inView)}
			}
			if len(records) > 0 {
				sc["records"] = records
			}
			writeRowsAvailable(&t, d, toolOf)
			writeContext(&t, sc, d)
		}
		// The site's other pages: a page that speaks Pling has links too,
		// and an agent should not have to guess /admin/.
		if out, oerr := b.browser.Outline(ctx, maxOutline*2); oerr == nil {
			var nav strings.Builder
			if links := navLinks(out); len(links) > 0 {
				nav.WriteString("\nLinks: " + strings.Join(links, "; "))
				sc["links"] = len(links)
			}
			if marks := landmarks(out); len(marks) > 0 {
				nav.WriteString("\nLandmarks: " + strings.Join(marks, ", "))
				sc["landmarks"] = len(marks)
			}
			b.mu.Lock()
			same := !full && nav.Len() > 0 && nav.String() == b.seenNav
			b.seenNav = nav.String()
			b.mu.Unlock()
			if same {
				t.WriteString("\nLinks and landmarks: as before (browser.page lists them).")
				sc["navUnchanged"] = true
			} else {
				t.WriteString(nav.String())
			}
		}
	}
	if full {
		b.writeTabs(ctx, &t, sc)
	}
	writeThrown(&t, sc, b.browser)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: t.String()}}, StructuredContent: sc}, nil
}

// writeRowsAvailable says, for each row action checked row by row, on
// how many rows it can run ("Row tools: close__ticket available for 3 of
// 25 rows"): the list keeps the tool while any row can, and a call on
// another row answers ACTION_UNAVAILABLE with the page's reason.
func writeRowsAvailable(t *strings.Builder, d *schema.SurfaceDescription, toolOf map[string]string) {
	var rows []string
	for _, c := range d.Capabilities {
		if n, name := c.Record.RowsAvailable(), toolOf[c.ID]; n != "" && name != "" {
			rows = append(rows, name+" "+n)
		}
	}
	if len(rows) > 0 {
		t.WriteString("\nRow tools: " + strings.Join(rows, "; "))
	}
}

// thrower is a Browser that knows what the current page threw
// (*cdp.Page: uncaught exceptions and unhandled rejections since it loaded).
type thrower interface {
	Thrown() (lines []string, total int)
}

// maxThrownShown bounds the exceptions browser.page quotes.
const maxThrownShown = 2

// writeThrown says that the page threw, when it did: the first
// exceptions (message and place, no stack) and how many there were.
func writeThrown(t *strings.Builder, sc map[string]any, br Browser) {
	th, ok := br.(thrower)
	if !ok {
		return
	}
	lines, total := th.Thrown()
	if total == 0 {
		return
	}
	if len(lines) > maxThrownShown {
		lines = lines[:maxThrownShown]
	}
	quoted := make([]string, len(lines))
	for i, l := range lines {
		quoted[i] = quoteCut(l, maxThrownText)
	}
	fmt.Fprintf(t, "\nThe page threw %d error(s): %s", total, strings.Join(quoted, "; "))
	if total > len(lines) {
		t.WriteString("; …")
	}
	t.WriteString(". Some of its tools may be missing or broken.")
	sc["threw"] = total
}

func stdcmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// navSeqer is a Browser that counts its tab's navigations as they start
// (*cdp.Page does).
type navSeqer interface {
	NavigationSeq() uint64
	NavigationPending() bool
}

// maxNavWait bounds how long a call waits for the page that a navigating
// action started to arrive.
const maxNavWait = 10 * time.Second

// navMark is where the tab was before a call: its navigation count, URL
// and tool names.
type navMark struct {
	seq   uint64
	url   string
	names []string
}

func (b *Bridge) markNav() navMark {
	var m navMark
	if ns, ok := b.browser.(navSeqer); ok {
		m.seq = ns.NavigationSeq()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	m.url = b.page.URL
	m.names = b.toolNamesLocked()
	return m
}

func (b *Bridge) toolNamesLocked() []string {
	names := make([]string, 0, len(b.tools))
	for n := range b.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// followNavigation runs after a call on a browsing session: when the call
// started a navigation of the tab (an action that sets location.href), it
// waits (at most maxNavWait) for the new page, rebuilds the tools from it,
// and returns where the tab went and the tool names when they changed —
// so that the result says it navigated (docs/agent.md §4), not only
// "Value: true".
func (b *Bridge) followNavigation(ctx context.Context, m navMark) (to string, tools []string) {
	ns, ok := b.browser.(navSeqer)
	if !ok {
		return "", nil
	}
	// One round trip to the page: the events the call caused arrive
	// before its answer. The round trip itself may fail because the
	// page is leaving (its script context destroyed under it): that is
	// a navigation too, not a reason to say nothing.
	info, err := b.browser.Info(ctx)
	if ns.NavigationSeq() == m.seq && (err != nil || info.URL == m.url) {
		return "", nil
	}
	// Wait while a navigation is on its way; what counts is that the tab
	// is at another URL (a late event of an earlier navigation, or one to
	// the same URL, reports none).
	deadline := time.Now().Add(maxNavWait)
	for (err != nil || (info.URL == m.url && ns.NavigationPending())) && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		info, err = b.browser.Info(ctx)
	}
	if err != nil || info.URL == m.url {
		return "", nil
	}
	b.refreshing.Lock()
	b.mu.Lock()
	b.revision = ""
	_, rerr := b.refreshLocked(ctx)
	b.publishLocked(ctx)
	names := b.toolNamesLocked()
	to = b.page.URL
	b.mu.Unlock()
	b.refreshing.Unlock()
	if rerr != nil {
		b.log.LogAttrs(ctx, slog.LevelWarn, "pling mcp: describing the page after a navigation failed", slog.String("error", rerr.Error()))
	}
	if to == "" {
		to = info.URL
	}
	if !slices.Equal(names, m.names) {
		tools = names
	}
	return to, tools
}

// navigationText adds a navigation to a result: its text and its
// structured content.
func navigationText(r *sdk.CallToolResult, to string, tools []string) {
	if to == "" {
		return
	}
	sc, _ := r.StructuredContent.(map[string]any)
	t := "\nThe page went to " + to + "."
	if sc != nil {
		if _, said := sc["navigatedTo"]; said {
			t = "" // the observation said it already
		}
		sc["navigatedTo"] = to
	}
	if tools != nil {
		if sc != nil {
			sc["toolsChanged"] = true
		}
		t += " Its tools now: " + stdcmpOr(strings.Join(tools, ", "), "none") + " (browser.page says what it shows)."
	}
	r.Content[0].(*sdk.TextContent).Text += t
}

// maxLinks bounds the links browser.page lists on a page that speaks
// Pling; maxStatesText bounds its states' text.
const (
	maxLinks      = 20
	maxStatesText = 800
)

// navLinks are the distinct links of an outline ("link: \"Text\" ->
// \"/href\"", each text a JSON string: cdp.Page.Outline), in document
// order (a page's navigation comes first), at most maxLinks, as
// "\"Text\" -> \"/href\"".
func navLinks(outline string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range strings.Split(outline, "\n") {
		l, ok := strings.CutPrefix(l, "link: ")
		if !ok {
			continue
		}
		_, rest, ok := readQuoted(l)
		if !ok {
			continue
		}
		rest, ok = strings.CutPrefix(rest, " -> ")
		if !ok {
			continue
		}
		href, _, ok := readQuoted(rest)
		if !ok || href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(strings.TrimSpace(href)), "javascript:") || seen[href] {
			continue
		}
		seen[href] = true
		out = append(out, l)
		if len(out) == maxLinks {
			break
		}
	}
	return out
}

// readQuoted reads the JSON string s starts with: its value and what
// follows it.
func readQuoted(s string) (string, string, bool) {
	d := json.NewDecoder(strings.NewReader(s))
	var v string
	if !strings.HasPrefix(s, `"`) || d.Decode(&v) != nil {
		return "", "", false
	}
	return v, s[d.InputOffset():], true
}

// landmarks are the landmarks of an outline ("landmark: navigation
// \"Main\""), in document order, as "navigation \"Main\"" (the outline
// lists at most 10).
func landmarks(outline string) []string {
	var out []string
	for _, l := range strings.Split(outline, "\n") {
		if l, ok := strings.CutPrefix(l, "landmark: "); ok {
			out = append(out, l)
		}
	}
	return out
}

// Bounds of what browser.page quotes of the page, in characters.
const (
	maxURLText    = 500
	maxLabelText  = 80
	maxThrownText = 300
	maxStateValue = maxStatesText
)

// quoteCut is s cut to max characters and quoted as the page's words
// (pagetext.Quote), "…" after the quote where it was cut.
func quoteCut(s string, max int) string {
	t, cut := pagetext.Cut(s, max)
	if cut > 0 {
		return pagetext.Quote(t) + "…"
	}
	return pagetext.Quote(t)
}

// stateValue is a state's value as browser.page shows it: its JSON,
// whose strings are the page's, quoted; a value over maxStateValue
// characters is cut, and then quoted whole, so that no string is left
// open.
func stateValue(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return "(not JSON)"
	}
	t, cut := pagetext.Cut(string(raw), maxStateValue)
	if cut > 0 {
		return pagetext.Quote(t) + "…"
	}
	return pagetext.Escape(t)
}

// writeContext says what a model reads before acting: the page's states
// and their values now, what cannot run now and why, and the guides it
// may point a person at.
func writeContext(t *strings.Builder, sc map[string]any, d *schema.SurfaceDescription) {
	if len(d.Context.States) > 0 {
		keys := make([]string, 0, len(d.Context.States))
		for k := range d.Context.States {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var st strings.Builder
		for i, k := range keys {
			item := pagetext.Quote(k) + "=" + stateValue(d.Context.States[k])
			if st.Len()+len(item) > maxStatesText {
				st.WriteString(fmt.Sprintf(" … (%d more)", len(keys)-i))
				break
			}
			if i > 0 {
				st.WriteString(", ")
			}
			st.WriteString(item)
		}
		t.WriteString("\nStates: " + st.String())
		sc["states"] = d.Context.States
	}
	if len(d.Context.Feedback) > 0 {
		// What the page shows as messages, and its declaration mistakes
		// (a records or state reader that failed): bounded by describe,
		// quoted here.
		var f []string
		for _, x := range d.Context.Feedback {
			f = append(f, fmt.Sprintf("%s %q", x.Level, x.Message))
		}
		t.WriteString("\nThe page says: " + strings.Join(f, "; "))
		sc["feedback"] = d.Context.Feedback
	}
	var unavailable []string
	for _, u := range d.Context.Unavailable {
		if listedUnavailable(u) {
			unavailable = append(unavailable, pagetext.Line(u.ID, 100)+" ("+unavailableReason(u)+")")
		}
	}
	if len(unavailable) > 0 {
		t.WriteString("\nUnavailable now: " + strings.Join(unavailable, "; "))
	}
	if len(d.Context.Guides) > 0 {
		var g []string
		for _, x := range d.Context.Guides {
			g = append(g, quoteCut(stdcmpOr(x.Label, x.Target), maxLabelText)+" ("+quoteCut(x.Target, maxURLText)+")")
		}
		t.WriteString("\nGuides (point the person at them): " + strings.Join(g, ", "))
		sc["guides"] = d.Context.Guides
	}
}
