package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/schema"
)

func init() {
	register(command{"invoke", "invoke one capability of a page", runInvoke})
}

func runInvoke(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out, errs := newTerminal(stdout), newTerminal(stderr)
	defer out.Flush()
	defer errs.Flush()
	stdout, stderr = out, errs
	fl := newFlags("invoke", stderr,
		"Usage: pling invoke TARGET CAPABILITY [--input JSON] [--record ID] [--session TOKEN | --session-file PATH | --token-file PATH] [--json]",
		"       pling invoke --session-name NAME [URL] CAPABILITY …  (the tab of pling session start)",
		"Invokes one capability (docs/protocol.md §3.5) through the agent client, which applies the recovery",
		"rules: it waits out RATE_LIMITED, describes again after ACTION_NOT_FOUND, and never resends",
		"a call whose outcome is unconfirmed.",
		targetHelp,
		sessionHelp,
		"Exit status: 0 success, 1 a business or protocol failure, 2 usage.",
	)
	inputText := fl.String("input", "{}", "the input as one JSON object")
	record := fl.String("record", "", "the record to act on (a folded capability's input.record)")
	pc := addPageFlags(fl, stderr)
	id := fl.String("id", "", "send under this request id (an idempotency key: resending an intent under its first id runs it at most once)")
	resume := fl.String("resume", "", "continue a composite action from its failed step with this STEP_FAILED resume token")
	asJSON := fl.Bool("json", false, "print the result (or the failure) as JSON, for programs")
	pos, exit, ok := pc.parse(args, 2, "TARGET and CAPABILITY")
	if !ok {
		return exit
	}
	input, err := parseInput(*inputText)
	if err != nil {
		fmt.Fprintf(stderr, "pling invoke: --input: %v\n", err)
		return 2
	}
	if *record != "" {
		if r, ok := input["record"]; ok && r != *record {
			fmt.Fprintf(stderr, "pling invoke: --record %s and --input's record %v disagree\n", *record, r)
			return 2
		}
		input["record"] = *record
	}
	if *id != "" && !wire.ValidID(*id) {
		fmt.Fprintf(stderr, "pling invoke: --id %q is not 1–128 chars of [A-Za-z0-9._:-]\n", *id)
		return 2
	}
	t, tr, sess, exit, ok := pc.open(ctx, pos[0])
	if !ok {
		return exit
	}
	defer closeTransport(t)

	var opts []agent.InvokeOption
	if *id != "" {
		opts = append(opts, agent.WithRequestID(*id))
	}
	if *resume != "" {
		opts = append(opts, agent.WithResume(*resume))
	}
	// While the page asks a person, say so on stderr: the wait may be
	// minutes, and it is not a hang.
	unseen := unseenBrowser(*pc.browserSession, pos[0])
	opts = append(opts, agent.OnWaiting(func(w agent.Waiting) {
		for _, l := range waitingNotes(w, unseen, pos[0]) {
			fmt.Fprintf(stderr, "pling invoke: %s\n", l)
		}
	}))
	res, err := agent.New(tr, agent.WithSession(sess)).Invoke(ctx, pos[1], input, opts...)
	if err != nil {
		if *asJSON {
			writeIndentedJSON(stdout, map[string]any{"ok": false, "error": failureJSON(err)})
		} else {
			printFailure(stderr, "invoke", err)
		}
		return 1
	}
	if *asJSON {
		writeIndentedJSON(stdout, map[string]any{"ok": true, "requestId": res.RequestID, "result": res.Raw})
		return 0
	}
	printResult(stdout, res)
	return 0
}

// parseInput reads --input: one JSON object, numbers kept as written.
func parseInput(text string) (map[string]any, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if m == nil {
		return nil, fmt.Errorf("not a JSON object: null")
	}
	if d.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return m, nil
}

// printResult renders a successful invoke for people.
func printResult(w io.Writer, r *agent.Result) {
	fmt.Fprintf(w, "ok: %s (request %s)\n", r.Capability, r.RequestID)
	if len(r.Value) > 0 {
		var b bytes.Buffer
		if json.Indent(&b, r.Value, "", "  ") != nil {
			b.Reset()
			b.Write(r.Value)
		}
		fmt.Fprintf(w, "value: %s\n", b.String())
	}
	if e := r.Evidence; e != nil {
		if e.Summary != "" {
			fmt.Fprintf(w, "evidence: %s\n", e.Summary)
		}
		for _, x := range e.Expectations {
			mark := "met"
			if !x.Met {
				mark = "not met"
			}
			before, _ := schema.Encode(x.Before)
			after, _ := schema.Encode(x.After)
			fmt.Fprintf(w, "  expected %s to %s: %s → %s, %s\n", x.State, x.Condition, before, after, mark)
		}
		if e.Approval != "" {
			fmt.Fprintf(w, "  approval: %s\n", e.Approval)
		}
		if e.Handoff != "" {
			fmt.Fprintf(w, "  handoff: %s\n", e.Handoff)
		}
	}
	if o := r.Observation; o != nil {
		for _, k := range keysSorted(o.States) {
			before, _ := schema.Encode(o.States[k].Before)
			after, _ := schema.Encode(o.States[k].After)
			fmt.Fprintf(w, "changed: %s %s → %s\n", k, before, after)
		}
		for _, f := range o.Feedback {
			fmt.Fprintf(w, "feedback: %s: %s\n", f.Level, f.Message)
		}
		if n := o.Navigation; n != nil {
			fmt.Fprintf(w, "navigated: %s → %s\n", n.From, n.To)
		}
		if o.CapabilitiesChanged {
			fmt.Fprintf(w, "capabilities changed: revision %s (describe again)\n", o.Revision)
		}
	}
}

// waitingNotes are the lines pling invoke prints for a Waiting notice:
// what the page waits for and, when nobody can see the browser (unseen)
// and the person is asked in it, that no one can answer. An approval on
// the authority's screen is answered there, whatever the browser.
func waitingNotes(w agent.Waiting, unseen bool, target string) []string {
	lines := []string{waitingLine(w)}
	if unseen && !w.Outside {
		lines = append(lines, unseenNote(target))
	}
	return lines
}

// waitingLine is a Waiting notice for people.
func waitingLine(w agent.Waiting) string {
	switch {
	case w.Kind == "handoff":
		return fmt.Sprintf("waiting for a person to finish their part of %s (up to %v)", w.Capability, w.Timeout)
	case w.Outside:
		return fmt.Sprintf("waiting for a person to approve %s on the authority's approval screen (up to %v)", w.Capability, w.Timeout)
	}
	return fmt.Sprintf("waiting for a person to approve %s (up to %v)", w.Capability, w.Timeout)
}

// unseenBrowser reports whether pling invoke drives a browser nobody can
// see: one it launched itself (headless), or the tab of a browser session
// started without --headed. A browser reached through $PLING_CDP may be
// anyone's, so nothing is said of it.
func unseenBrowser(browserSession, target string) bool {
	if browserSession != "" {
		s, err := readBrowserSession(browserSession)
		return err == nil && !s.Headed
	}
	if os.Getenv("PLING_CDP") != "" {
		return false
	}
	return isPageURL(target)
}

// unseenNote says that the person being waited for cannot see the
// browser, and how to give them one.
func unseenNote(target string) string {
	return "nobody can see this browser (it runs without a window), so no person can answer; the wait ends in a denial or a timeout. " +
		"To let a person answer, give them the window: pling session start --headed " + target +
		", then pling invoke --session-name NAME …; or use pling mcp --headed"
}
