package cdp

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	cdpruntime "github.com/chromedp/cdproto/runtime"
)

// What the page threw: the uncaught exceptions and unhandled rejections
// of the document each tab shows, as the browser reports them
// (Runtime.exceptionThrown, from the navigation on), so that pling
// describe, pling check and pling mcp can tell the page's author and the
// agent that a script stopped, and declarations after it may be missing.
// This lives here, not in pling.js, to keep the shim small.

// maxThrown bounds the exceptions kept per document; maxThrownText bounds
// a message and a location each.
const (
	maxThrown     = 5
	maxThrownText = 200
)

// thrown is what one tab's current document threw.
type thrown struct {
	lines []thrownLine
	total int // all reported, kept or not, less the revoked
}

type thrownLine struct {
	id   int64
	text string
}

// Thrown lists what the current tab's document threw since it loaded
// (or, for an attached tab, since the transport attached): up to five
// lines "MESSAGE (at URL:LINE)", each bounded, with no stack beyond its
// first frame and no query or fragment in its URL; total counts them all.
func (p *Page) Thrown() (lines []string, total int) {
	id := p.TabID()
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.thrown[id]
	if t == nil {
		return nil, 0
	}
	for _, l := range t.lines {
		lines = append(lines, l.text)
	}
	return lines, t.total
}

// noteThrown keeps an exception tabID's document threw.
func (p *Page) noteThrown(tabID string, d *cdpruntime.ExceptionDetails) {
	if d == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.thrown == nil {
		p.thrown = map[string]*thrown{}
	}
	t := p.thrown[tabID]
	if t == nil {
		t = &thrown{}
		p.thrown[tabID] = t
	}
	t.total++
	if len(t.lines) < maxThrown {
		t.lines = append(t.lines, thrownLine{d.ExceptionID, ThrownText(d)})
	}
}

// revokeThrown forgets a rejection the page handled after all.
func (p *Page) revokeThrown(tabID string, id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.thrown[tabID]
	if t == nil {
		return
	}
	for i, l := range t.lines {
		if l.id == id {
			t.lines = append(t.lines[:i], t.lines[i+1:]...)
			t.total--
			return
		}
	}
}

// forgetThrown starts a new document's record.
func (p *Page) forgetThrown(tabID string) {
	p.mu.Lock()
	delete(p.thrown, tabID)
	p.mu.Unlock()
}

// ThrownText is one exception as "MESSAGE (at URL:LINE)": the message is
// the first line of the error's description ("TypeError: x is not a
// function"), or the thrown value, prefixed "unhandled rejection: " for a
// promise nobody caught; the place is the first stack frame's (else the
// exception's own), without its query and fragment.
func ThrownText(d *cdpruntime.ExceptionDetails) string {
	msg := ""
	if e := d.Exception; e != nil {
		msg = e.Description
		if msg == "" && len(e.Value) > 0 {
			msg = string(e.Value)
		}
		if msg == "" {
			msg = string(e.UnserializableValue)
		}
	}
	if msg == "" {
		msg = d.Text
	}
	msg, _, _ = strings.Cut(msg, "\n")
	msg = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(msg), "Uncaught "))
	if msg == "" {
		msg = "an exception"
	}
	if strings.Contains(d.Text, "(in promise)") {
		msg = "unhandled rejection: " + msg
	}
	where, line := d.URL, d.LineNumber
	if st := d.StackTrace; st != nil && len(st.CallFrames) > 0 && st.CallFrames[0].URL != "" {
		where, line = st.CallFrames[0].URL, st.CallFrames[0].LineNumber
	}
	s := clip(msg, maxThrownText)
	if where != "" {
		if u, err := url.Parse(where); err == nil {
			u.RawQuery, u.Fragment, u.User = "", "", nil
			where = u.String()
		}
		s += fmt.Sprintf(" (at %s:%d)", clip(where, maxThrownText), line+1)
	}
	return s
}

// clip bounds s to max runes, marking a cut with an ellipsis.
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}
