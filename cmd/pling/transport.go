package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/conform/fixture"
	"github.com/pling-go/pling/internal/pagebridge"
	"github.com/pling-go/pling/runtime"
	"github.com/pling-go/pling/schema"
)

// transportFor turns a command's TARGET into the Surface transport to its
// page; describe, invoke and mcp all go through it, so a new kind of target
// is one more case here.
//
//	fixture:PATH   a fixture page (docs/protocol.md §7.1: the page object, or a
//	               whole conformance case, whose page is used), run in this
//	               process
//	http(s)://…    a real page in headless Chromium over CDP (launched from
//	               $PLING_CHROMIUM or /usr/bin/chromium, or attached to
//	               the debugging endpoint in $PLING_CDP: a new tab, or
//	               with $PLING_CDP_TAB that tab, navigated to the URL)
//
// A transport that holds resources (a browser) implements io.Closer; the
// command closes it with closeTransport.
func transportFor(ctx context.Context, target string) (agent.Transport, error) {
	scheme, rest, ok := strings.Cut(target, ":")
	switch {
	case target == "":
		return nil, &targetError{"no target: " + acceptedTargets}
	case ok && scheme == "fixture":
		if rest == "" {
			return nil, &targetError{"fixture: needs a path: fixture:PATH"}
		}
		return fixtureTransport(rest)
	case ok && (scheme == "http" || scheme == "https"):
		if ws, tab := os.Getenv("PLING_CDP"), os.Getenv("PLING_CDP_TAB"); ws != "" && tab != "" {
			return attachTab(ctx, ws, tab, target) // pling session start's tab
		}
		// A page the browser would show as an error is reported as such
		// (a kept session's tab may hold cookies this check does not).
		if err := checkPage(ctx, target); err != nil {
			return nil, err
		}
		return cdp.Open(ctx, target, cdp.Options{Remote: os.Getenv("PLING_CDP"), Progress: progressOut})
	case ok && len(scheme) > 1:
		return nil, &targetError{fmt.Sprintf("%s: unknown kind of target %q (%s)", target, scheme, acceptedTargets)}
	default:
		if _, err := os.Stat(target); err == nil {
			return nil, &targetError{fmt.Sprintf("%s: a file target needs its kind: fixture:%s", target, target)}
		}
		return nil, &targetError{fmt.Sprintf("%s: not a target (%s)", target, acceptedTargets)}
	}
}

// acceptedTargets names the forms of TARGET, for errors.
const acceptedTargets = "give an http:// or https:// page URL, or fixture:PATH"

// targetHelp is the TARGET line of every command's usage.
const targetHelp = "TARGET is a page URL (opened in headless Chromium: $PLING_CHROMIUM or /usr/bin/chromium, or the\n" +
	"browser at the debugging endpoint $PLING_CDP) or fixture:PATH (a fixture page, run in this process)."

// progressOut receives progress lines while a browser starts (stderr, so
// that --json output stays clean).
var progressOut io.Writer = os.Stderr

// targetError is a TARGET the command cannot read: a usage error (exit 2).
type targetError struct{ msg string }

func (e *targetError) Error() string { return e.msg }

// targetExit is the exit status for a transportFor error: 2 when the
// target is malformed, 1 when it could not be opened.
func targetExit(err error) int {
	var te *targetError
	if errors.As(err, &te) {
		return 2
	}
	return 1
}

func closeTransport(t agent.Transport) {
	if c, ok := t.(io.Closer); ok {
		_ = c.Close()
	}
}

// fixtureTransport loads a fixture page and serves it in process. A
// fixture page runs on a fake clock that starts at 0; here it follows the
// wall clock (each request first advances it by the time that passed), so
// rate-limit windows refill and tokens expire as the fixture says, in real
// time, while expectation polling still takes no time.
func fixtureTransport(path string) (agent.Transport, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	page, err := loadFixturePage(data, pagebridge.WithUnexposedFeedback[runtime.Option]())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &wallClockFixture{page: page, inner: agent.InProcess(page.Runtime()), start: time.Now()}, nil
}

// loadFixturePage reads a fixture page, or the page of a conformance case
// (an object with "page" and "steps").
func loadFixturePage(data []byte, opts ...runtime.Option) (*fixture.Page, error) {
	var probe struct {
		Page  json.RawMessage `json:"page"`
		Steps json.RawMessage `json:"steps"`
	}
	d := json.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(&probe); err != nil {
		return nil, fmt.Errorf("not a fixture page: %w", err)
	}
	if len(probe.Page) > 0 && len(probe.Steps) > 0 {
		data = probe.Page
	}
	return fixture.Load(data, opts...)
}

type wallClockFixture struct {
	page  *fixture.Page
	inner agent.Transport
	start time.Time

	mu       sync.Mutex
	advanced int64
}

func (f *wallClockFixture) RoundTrip(ctx context.Context, request []byte) ([]byte, error) {
	f.mu.Lock()
	if now := time.Since(f.start).Milliseconds(); now > f.advanced {
		f.page.Advance(now - f.advanced)
		f.advanced = now
	}
	f.mu.Unlock()
	return f.inner.RoundTrip(ctx, request)
}

// The rest is shared by the agent-side commands (describe, invoke, mcp).

// failureJSON is an agent error for programs: its class (protocol,
// business, unconfirmed, replay, not-sent, transport), the stable code and what
// comes with it.
func failureJSON(err error) map[string]any {
	var (
		ue *agent.UnconfirmedError
		re *agent.ReplayError
		be *agent.BusinessError
		pe *agent.ProtocolError
		ns *agent.NotSentError
	)
	out := map[string]any{}
	switch {
	case errors.As(err, &ns):
		out["class"] = "not-sent"
		out["requestId"] = ns.RequestID
	case errors.As(err, &ue):
		out["class"] = "unconfirmed"
		out["requestId"] = ue.RequestID
		if ue.Protocol != nil {
			out["code"] = string(ue.Protocol.Code)
		}
	case errors.As(err, &re):
		out["class"] = "replay"
		out["code"] = string(re.Code)
		out["requestId"] = re.RequestID
		out["previous"] = map[string]any{"completed": re.Previous.Completed, "ok": re.Previous.OK, "code": string(re.Previous.Code)}
	case errors.As(err, &be):
		out["class"] = "business"
		out["code"] = string(be.Code)
		out["requestId"] = be.RequestID
		if len(be.Details) > 0 {
			out["details"] = be.Details
		}
		if be.Resume != "" {
			out["resume"] = be.Resume
		}
		if be.Observation != nil {
			out["observation"] = be.Observation
		}
		if be.Observed != nil {
			out["observed"] = be.Observed
		}
	case errors.As(err, &pe):
		out["class"] = "protocol"
		out["code"] = string(pe.Code)
		if pe.RequestID != "" {
			out["requestId"] = pe.RequestID
		}
		if pe.RetryAfterMs > 0 {
			out["retryAfterMs"] = pe.RetryAfterMs
		}
		if len(pe.Details) > 0 {
			out["details"] = pe.Details
		}
	default:
		out["class"] = "transport"
	}
	out["message"] = err.Error()
	return out
}

// cliNextSteps are the next steps of the codes whose registry text does
// not say what the person at the command line can do: an unknown record
// is not "the page changed; describe again", and "the gate" is jargon.
var cliNextSteps = map[perr.Code]string{
	perr.ActionNotFound:    "The page has no such action or record now: check the id (and --record) against pling describe TARGET, which lists both.",
	perr.ActionUnavailable: "Do what the reason says first; pling describe TARGET lists what can run now.",
}

// printFailure is an agent error for people: the error, then the
// registry's next step for its code and what helps to take it.
func printFailure(w io.Writer, cmd string, err error) {
	fmt.Fprintf(w, "pling %s: %s\n", cmd, strings.TrimPrefix(err.Error(), "pling: "))
	f := failureJSON(err)
	if code, _ := f["code"].(string); code != "" {
		if next, ok := cliNextSteps[perr.Code(code)]; ok {
			fmt.Fprintf(w, "  next: %s\n", next)
		} else if e, ok := perr.Lookup(perr.Code(code)); ok {
			fmt.Fprintf(w, "  next: %s\n", e.Action.En)
		}
	}
	if d, ok := f["details"]; ok {
		b, _ := schema.Encode(d)
		fmt.Fprintf(w, "  details: %s\n", b)
	}
	if r, ok := f["resume"].(string); ok {
		fmt.Fprintf(w, "  resume: continue with --resume %s\n", r)
	}
	var be *agent.BusinessError
	if errors.As(err, &be) && be.Observed != nil && len(be.Observed.Context.States) > 0 {
		b, _ := schema.Encode(be.Observed.Context.States)
		fmt.Fprintf(w, "  observed states: %s\n", b)
	}
	if f["class"] == "unconfirmed" {
		fmt.Fprintln(w, "  observe with: pling describe TARGET")
	}
}
