package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
)

// The help desk without Pling: the same site with pling.js left out, so
// that pling mcp has only its view (browser.view, browser.act) to do the
// tasks with, as Playwright MCP has only its snapshot.

// plingScriptTag is how the help desk's layout loads the shim.
const plingScriptTag = `<script src="/pling/pling.js" data-expose="*" defer></script>`

// plingNoop stands in for the shim: the page's own script calls
// pling.state and pling.action after it set itself up, and without any
// pling those calls would throw. It declares nothing: the page does not
// speak Pling (no pling.surface).
const plingNoop = `<script>window.pling = { state() {}, records() {}, action() {}, guide() {}, region() {} };</script>`

// withoutPling serves h's pages with the shim's script tag replaced by
// plingNoop.
func withoutPling(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/pling/") {
			http.NotFound(w, r)
			return
		}
		r = r.Clone(r.Context())
		r.Header.Del("Accept-Encoding") // the page's text, to rewrite
		r.Header.Del("Range")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			body = bytes.ReplaceAll(body, []byte(plingScriptTag), []byte(plingNoop))
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.Header().Del("ETag")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// plainTasks are the help desk's tasks on the help desk without Pling:
// pling mcp through its view, Playwright MCP through the same script as
// on the help desk.
var plainTasks = []agentTask{
	{
		Name: "plain helpdesk close", Site: sitePlain, Ask: "close ticket " + taskTicket + " on the help desk without Pling",
		pw: helpdeskTasks[0].pw,
		pling: func(ctx context.Context, a *plingAgent) (string, error) {
			// The search's result lists the rows it brought.
			out, err := a.fillAndEnter(ctx, "/tickets/", "searchbox", "Search", taskTicket)
			if err != nil {
				return "", err
			}
			closeRef, err := viewRef(out, "button", "Close ticket "+taskTicket)
			if err != nil {
				return "", err
			}
			out, err = a.act(ctx, "click", closeRef, "")
			if err != nil {
				return "", err
			}
			// The view's changes show the row's status now.
			if !strings.Contains(out, `"closed"`) {
				return "", fmt.Errorf("the click's result does not show %s closed: %.1200s", taskTicket, out)
			}
			return taskTicket + " closed", nil
		},
	},
	{
		Name: "plain helpdesk setting", Site: sitePlain, Ask: "set the help desk's answer time to " + taskSLA + " hours in its settings, without Pling",
		pw: helpdeskTasks[1].pw,
		pling: func(ctx context.Context, a *plingAgent) (string, error) {
			out, err := a.fillAndEnter(ctx, "/admin/", "spinbutton", "Answer within (hours)", taskSLA)
			if err != nil {
				return "", err
			}
			if !strings.Contains(out, `"Saved."`) {
				return "", fmt.Errorf("the result does not show the settings saved: %.1200s", out)
			}
			return "saved", nil
		},
	},
}

// sitePlain names the help desk without Pling (agentTask.Site).
const sitePlain = "plain helpdesk"

// view reads the page's view.
func (a *plingAgent) view(ctx context.Context) (string, error) {
	r, err := a.cur.call(ctx, "browser.view", map[string]any{})
	if err != nil {
		return "", err
	}
	if r.IsError {
		return "", fmt.Errorf("browser.view: %.1200s", r.Text)
	}
	return r.Text, nil
}

// fillAndEnter opens path, fills the view's field with role and name
// with text and presses Enter in it, which submits its form as a
// person's Enter would; it returns what the press's browser.act said.
func (a *plingAgent) fillAndEnter(ctx context.Context, path, role, name, text string) (string, error) {
	if err := a.open(ctx, path, "browser.view"); err != nil {
		return "", err
	}
	v, err := a.view(ctx)
	if err != nil {
		return "", err
	}
	field, err := viewRef(v, role, name)
	if err != nil {
		return "", err
	}
	if _, err := a.act(ctx, "fill", field, text); err != nil {
		return "", err
	}
	return a.act(ctx, "press", field, "Enter")
}

// act calls browser.act; a refusal fails the run.
func (a *plingAgent) act(ctx context.Context, do, ref, text string) (string, error) {
	args := map[string]any{"do": do, "ref": ref}
	if text != "" {
		args["text"] = text
	}
	r, err := a.cur.call(ctx, "browser.act", args)
	if err != nil {
		return "", err
	}
	if r.IsError {
		return "", fmt.Errorf("browser.act %s %s: %.1200s", do, ref, r.Text)
	}
	return r.Text, nil
}

// viewRef is the ref of the view's line with role and name (the name as
// the view quotes it).
func viewRef(view, role, name string) (string, error) {
	q, _ := json.Marshal(name)
	re := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(role+" "+string(q)) + ` (e\d+)`)
	if m := re.FindStringSubmatch(view); m != nil {
		return m[1], nil
	}
	return "", errors.New("the view has no " + role + " " + strconv.Quote(name) + ": " + fmt.Sprintf("%.1200s", view))
}

// The targets on a site without Pling, per task: pling mcp's view
// receives no more bytes than Playwright MCP's snapshot path and makes at
// most 1.2 times its calls.
const (
	plainBytesLimit = 1.0
	plainCallsLimit = 1.2
)

// plainTargets are those targets for each completed task without Pling.
func plainTargets(tasks []agentResult) []bbTarget {
	var out []bbTarget
	for _, t := range tasks {
		if !t.WithoutPling || t.Failure != "" {
			continue
		}
		p, ok := figure(t.Sides, sidePling)
		s, ok2 := figure(t.Sides, sidePWSnapshot)
		if !ok || !ok2 {
			continue
		}
		b, c := ratio(p.Received, s.Received), ratio(p.Calls, s.Calls)
		out = append(out,
			target("bytes vs snapshot path: "+t.Name, b, plainBytesLimit, "Pling/Playwright", fmt.Sprintf("Pling/Playwright %.2f× (target ≤ %g×)", b, plainBytesLimit)),
			target("calls vs snapshot path: "+t.Name, c, plainCallsLimit, "Pling/Playwright", fmt.Sprintf("Pling/Playwright %.2f× (target ≤ %g×)", c, plainCallsLimit)))
	}
	return out
}
