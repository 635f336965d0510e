package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/internal/pagetext"
)

// The browsing session: a Page is one browser tab the agent drives, and
// the tab may go from page to page (Navigate, Back, a link the page
// follows itself) and the session from tab to tab (SwitchTab). Every
// Surface request goes to the page the current tab shows now.

// PageInfo is what the current tab shows.
type PageInfo struct {
	URL   string `json:"url"`
	Title string `json:"title"`
	// Pling is true when the page speaks Pling (window.pling.surface).
	Pling bool `json:"pling"`
}

// Tab is one page tab of the browser.
type Tab struct {
	ID      string `json:"id"`
	URL     string `json:"url"`
	Title   string `json:"title"`
	Current bool   `json:"current,omitempty"`
}

// listenTab installs, once per tab, the listener that carries the page's
// "pling:waiting" events and reports the tab's main-frame navigations.
func (p *Page) listenTab(ctx, tab context.Context) error {
	c := chromedp.FromContext(tab)
	id := ""
	if c != nil && c.Target != nil {
		id = string(c.Target.TargetID)
	}
	p.mu.Lock()
	done := p.listened[id]
	p.listened[id] = true
	p.mu.Unlock()
	if done {
		return nil
	}
	return p.listenWaiting(ctx, tab)
}

// OnNavigate registers f, called (on its own goroutine) when the current
// tab's main frame navigates — whoever started it: Navigate, Back, a link
// or a redirect of the page itself — and when SwitchTab changes the tab.
func (p *Page) OnNavigate(f func()) {
	p.mu.Lock()
	p.onNav = append(p.onNav, f)
	p.mu.Unlock()
}

func (p *Page) navigated(tab context.Context) {
	p.mu.Lock()
	if tab != p.tab {
		p.mu.Unlock()
		return // a tab in the background
	}
	fs := append([]func(){}, p.onNav...)
	p.mu.Unlock()
	for _, f := range fs {
		go f()
	}
}

// infoJS waits for the document to be parsed (deferred scripts, pling.js
// among them, have run), gives a shim added later half a second, and says
// what the page is. The title is the page's to say, up to 1,000
// characters: a longer one (or one that is not a string) is left out
// unread.
const infoJS = `(async () => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  for (let i = 0; document.readyState === "loading" && i < 400; i++) await sleep(25);
  for (let i = 0; !(window.pling && window.pling.surface) && i < 20; i++) await sleep(25);
  const t = document.title;
  return {url: location.href, title: typeof t === "string" && t.length <= 1000 ? t : "", pling: !!(window.pling && window.pling.surface)};
})()`

// Info says what the current tab shows, once its document is parsed.
func (p *Page) Info(ctx context.Context) (PageInfo, error) {
	tctx, cancel := p.bounded(ctx, p.cur())
	defer cancel()
	info, err := chromedp.Run(tctx, chromedp.Evaluate[PageInfo](infoJS, chromedp.EvalAwaitPromise))
	if err != nil {
		return PageInfo{}, fmt.Errorf("cdp: reading the page: %w", err)
	}
	return info, nil
}

// bounded is tab's context, ending at the request timeout or with ctx.
func (p *Page) bounded(ctx, tab context.Context) (context.Context, context.CancelFunc) {
	tctx, cancel := context.WithTimeout(tab, 3*p.opts.timeout())
	stop := context.AfterFunc(ctx, cancel)
	return tctx, func() { stop(); cancel() }
}

// Navigate loads url in the current tab and says what it shows.
func (p *Page) Navigate(ctx context.Context, url string) (PageInfo, error) {
	tctx, cancel := p.bounded(ctx, p.cur())
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(url)); err != nil {
		return PageInfo{}, fmt.Errorf("cdp: loading %s: %w", url, err)
	}
	return p.Info(ctx)
}

// Back goes one page back in the current tab's history and says what it
// shows. (chromedp's NavigateBack waits for a load event, which a page
// restored from the back-forward cache never fires; this waits for the
// tab to show the entry instead.)
func (p *Page) Back(ctx context.Context) (PageInfo, error) {
	tctx, cancel := p.bounded(ctx, p.cur())
	defer cancel()
	var want string
	h, err := chromedp.Call(tctx, page.GetNavigationHistory, cdproto.Empty{})
	if err == nil {
		cur := int(h.CurrentIndex)
		if cur <= 0 || cur >= len(h.Entries) {
			return PageInfo{}, errors.New("cdp: there is no page to go back to")
		}
		want = h.Entries[cur-1].URL
		_, err = chromedp.Call(tctx, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: h.Entries[cur-1].ID})
	}
	if err != nil {
		return PageInfo{}, fmt.Errorf("cdp: going back: %w", err)
	}
	for {
		href, err := chromedp.Run(tctx, chromedp.Evaluate[string](`location.href`))
		if err == nil && href == want {
			break
		}
		select {
		case <-tctx.Done():
			return PageInfo{}, fmt.Errorf("cdp: going back to %s: %w", want, tctx.Err())
		case <-time.After(25 * time.Millisecond):
		}
	}
	return p.Info(ctx)
}

// Tabs lists the browser's page tabs, the current one marked.
func (p *Page) Tabs(ctx context.Context) ([]Tab, error) {
	tctx, cancel := p.bounded(ctx, p.first)
	defer cancel()
	infos, err := chromedp.Targets(tctx)
	if err != nil {
		return nil, fmt.Errorf("cdp: listing tabs: %w", err)
	}
	cur := p.TabID()
	var out []Tab
	for _, in := range infos {
		if in.Type != "page" {
			continue
		}
		out = append(out, Tab{ID: string(in.TargetID), URL: in.URL, Title: in.Title, Current: string(in.TargetID) == cur})
	}
	return out, nil
}

// SwitchTab makes the tab with id current (and brings it to the front, for
// a person watching) and says what it shows.
func (p *Page) SwitchTab(ctx context.Context, id string) (PageInfo, error) {
	p.mu.Lock()
	tab, ok := p.tabs[id]
	p.mu.Unlock()
	if !ok {
		tabs, err := p.Tabs(ctx)
		if err != nil {
			return PageInfo{}, err
		}
		found := false
		for _, t := range tabs {
			found = found || t.ID == id
		}
		if !found {
			return PageInfo{}, fmt.Errorf("cdp: no tab %s (list them with the tabs tool)", id)
		}
		var cancel context.CancelFunc
		tab, cancel = chromedp.NewContext(p.first, chromedp.WithTargetID(target.ID(id)), chromedp.WithDetachOnCancel())
		// The first Do must get tab itself: chromedp ties the attached
		// session to the context of the first Do, and a bounded child's
		// end would detach it. A timer bounds it instead.
		timer := time.AfterFunc(3*p.opts.timeout(), cancel)
		err = chromedp.Do(tab)
		timer.Stop()
		if err == nil {
			tctx, tcancel := p.bounded(ctx, tab)
			err = p.listenTab(tctx, tab)
			tcancel()
		}
		if err != nil {
			cancel()
			return PageInfo{}, fmt.Errorf("cdp: attaching to tab %s: %w", id, err)
		}
		p.mu.Lock()
		p.tabs[id] = tab
		p.stop = append(p.stop, cancel)
		p.mu.Unlock()
	}
	// Bring it to the front for a person watching; a browser-level
	// command, and only cosmetic, so bounded short.
	actx, cancel := context.WithTimeout(tab, 5*time.Second)
	_, _ = chromedp.CallBrowser(actx, target.ActivateTarget, target.ActivateTargetParams{TargetID: target.ID(id)})
	cancel()
	p.mu.Lock()
	changed := p.tab != tab
	p.tab = tab
	p.mu.Unlock()
	if changed {
		p.navigated(tab)
	}
	return p.Info(ctx)
}

// outlineJS lists the page's landmarks first (at most 10, by the word
// for their role — navigation, main, header, footer, aside, search,
// form, region — and their accessible name from aria-label or
// aria-labelledby; a header or footer inside a section is none, nor is a
// section or form without a name), then its headings, links and buttons
// in document order, at most max items in all, each as [kind, text, href]
// with kind "landmark:WORD", "h1"…"h3", "link" or "button". It runs in an
// isolated world (Outline), where the page's script cannot reach the
// functions it calls, and cuts each text to 400 characters there; Go cuts
// again and quotes (outlineLines).
const outlineJS = `((max) => {
  const out = [], cut = (s) => (s || "").replace(/\s+/g, " ").trim().slice(0, 400);
  const hidden = (el) => el.closest("[hidden],[aria-hidden=true]") || (el.getClientRects && el.getClientRects().length === 0);
  const words = { navigation: "navigation", main: "main", banner: "header", contentinfo: "footer", complementary: "aside", search: "search", form: "form", region: "region" };
  const tags = { nav: "navigation", main: "main", header: "header", footer: "footer", aside: "aside", search: "search", form: "form", section: "region" };
  const named = (el) => cut(el.getAttribute("aria-label") || (el.getAttribute("aria-labelledby") || "").split(/\s+/).slice(0, 10).map((id) => { const r = id && document.getElementById(id); return r ? cut(r.textContent) : ""; }).join(" "));
  for (const el of document.querySelectorAll("nav,main,header,footer,aside,search,form,section,[role]")) {
    if (out.length >= 10) break;
    const tag = el.tagName.toLowerCase(), role = el.getAttribute("role");
    let w = role ? words[role.trim().toLowerCase()] : tags[tag];
    if (!w || hidden(el)) continue;
    const name = named(el);
    if (!role && (w === "header" || w === "footer") && el.parentElement && el.parentElement.closest("article,aside,main,nav,section")) continue;
    if ((w === "form" || w === "region") && !name) continue;
    out.push(["landmark:" + w, name, ""]);
  }
  for (const el of document.querySelectorAll("h1,h2,h3,a[href],button,input[type=submit],input[type=button],[role=button]")) {
    if (out.length >= max) break;
    if (hidden(el)) continue;
    const t = cut(el.innerText || el.value || el.getAttribute("aria-label") || el.title);
    const tag = el.tagName.toLowerCase();
    if (/^h[1-3]$/.test(tag)) { if (t) out.push([tag, t, ""]); }
    else if (tag === "a") out.push(["link", t, cut(el.getAttribute("href"))]);
    else out.push(["button", t, ""]);
  }
  return out;
})`

// outlineWorld names the isolated world the outline runs in.
const outlineWorld = "pling-outline"

// maxOutlineText bounds each text of an outline line, in characters.
const maxOutlineText = 80

// Outline is a bounded text outline of the current page for an agent that
// cannot describe it (a page without Pling): its landmarks, headings,
// links and buttons, one a line, at most maxBytes bytes, every text the
// page wrote quoted as a JSON string ("link: \"Text\" -> \"/href\"",
// "landmark: navigation \"Main\"", "## \"Heading\"", "button:
// \"Buy\"") and cut here, in Go. The script runs in an isolated world of
// the tab's main frame: the page's script can change the DOM it reads,
// not the functions that read it (a page that replaced
// String.prototype.slice would otherwise decide the cut).
func (p *Page) Outline(ctx context.Context, maxBytes int) (string, error) {
	tctx, cancel := p.bounded(ctx, p.cur())
	defer cancel()
	items, err := outlineItems(tctx)
	if err != nil {
		return "", fmt.Errorf("cdp: reading the page: %w", err)
	}
	var b strings.Builder
	for _, l := range outlineLines(items) {
		if b.Len()+len(l)+1 > maxBytes {
			b.WriteString("…")
			break
		}
		b.WriteString(l + "\n")
	}
	return b.String(), nil
}

// outlineItems runs outlineJS in a new isolated world of the tab's main
// frame.
func outlineItems(ctx context.Context) ([][3]string, error) {
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdproto.Empty{})
	if err != nil {
		return nil, err
	}
	if tree.FrameTree == nil || tree.FrameTree.Frame == nil {
		return nil, errors.New("the tab has no main frame")
	}
	world, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: tree.FrameTree.Frame.ID, WorldName: outlineWorld})
	if err != nil {
		return nil, err
	}
	byValue := true
	res, err := chromedp.Call(ctx, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: outlineJS + `(200)`,
		ContextID: world.ExecutionContextID, ReturnByValue: &byValue})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil || res.Result == nil {
		return nil, errors.New("the outline script failed")
	}
	var items [][3]string
	if err := json.Unmarshal(res.Result.Value, &items); err != nil {
		return nil, err
	}
	return items, nil
}

// outlineLines writes the outline's items as lines, each text cut to
// maxOutlineText characters and quoted (pagetext.Quote).
func outlineLines(items [][3]string) []string {
	q := func(s string) string {
		t, _ := pagetext.Cut(strings.Join(strings.Fields(s), " "), maxOutlineText)
		return pagetext.Quote(t)
	}
	var out []string
	for _, it := range items {
		kind, text, href := it[0], it[1], it[2]
		switch {
		case strings.HasPrefix(kind, "landmark:"):
			l := "landmark: " + pagetext.Line(strings.TrimPrefix(kind, "landmark:"), 20)
			if text != "" {
				l += " " + q(text)
			}
			out = append(out, l)
		case kind == "h1" || kind == "h2" || kind == "h3":
			out = append(out, strings.Repeat("#", int(kind[1]-'0'))+" "+q(text))
		case kind == "link":
			out = append(out, "link: "+q(text)+" -> "+q(href))
		case kind == "button":
			out = append(out, "button: "+q(text))
		}
	}
	return out
}

// BrowserPID is the process id of the browser Start launched (0 when it
// attached to one).
func (p *Page) BrowserPID() int {
	if c := chromedp.FromContext(p.first); c != nil && c.Browser != nil {
		if pr := c.Browser.Process(); pr != nil {
			return pr.Pid
		}
	}
	return 0
}
