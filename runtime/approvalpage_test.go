package runtime

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/schema"
)

// TestApprovalInputInDeclaredOrder: the dialog lists the params as the
// page declared them, not sorted by name; names the
// declaration does not order follow, sorted.
func TestApprovalInputInDeclaredOrder(t *testing.T) {
	tests := []struct {
		name  string
		order []string
		want  []string
	}{
		{"declared order", []string{"to", "amount", "note"}, []string{"to", "amount", "note"}},
		{"no order: sorted", nil, []string{"amount", "note", "to"}},
		{"partial order: the rest sorted", []string{"to"}, []string{"to", "amount", "note"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ap := &scriptApprover{mode: "approve"}
			e := newEnv(t, WithApprover(ap, time.Minute))
			var ran atomic.Int64
			mustDeclare(t, e.rt, Action{ID: "transfer", Title: "Transfer", Approval: true, ParamOrder: tc.order,
				Params: map[string]Param{"to": {Type: "string"}, "amount": {Type: "number"}, "note": {Type: "string"}},
				Run:    counter(&ran, nil)})
			if _, res := e.invoke("transfer", map[string]any{"amount": 5, "to": "alice", "note": "rent"}); res.Error != nil {
				t.Fatalf("invoke: %+v", res.Error)
			}
			var got []string
			for _, f := range ap.got[0].Input {
				got = append(got, f.Name)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("input order (-want +got):\n%s", d)
			}
		})
	}
}

// TestApprovalNamesTheAgent: the challenge says which agent asks — the
// session's agent name, escaped and bounded like any shown text — and
// none without one.
func TestApprovalNamesTheAgent(t *testing.T) {
	tests := []struct{ name, agent, want string }{
		{"named", "Claude (work laptop)", "Claude (work laptop)"},
		{"no name", "", ""},
		{"a bidi override is escaped", "Cla\u202Eude", `Cla\u{202E}ude`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ap := &scriptApprover{mode: "approve"}
			e := newEnv(t, WithApprover(ap, time.Minute), WithSessions(SessionVerifierFunc(func(context.Context, string, int64) (schema.SurfaceSession, error) {
				return schema.SurfaceSession{Subject: "alice", Scope: []string{"*"}, ExpiresAtMs: 1 << 50, Agent: tc.agent}, nil
			}), true))
			var ran atomic.Int64
			mustDeclare(t, e.rt, Action{ID: "pay", Title: "Pay", Approval: true, Run: counter(&ran, nil)})
			req := e.invokeReq("pay", nil)
			req["session"] = "tok"
			if _, res := e.invokeWith(req); res.Error != nil {
				t.Fatalf("invoke: %+v", res.Error)
			}
			if got := ap.got[0].Agent; got != tc.want {
				t.Errorf("agent %q, want %q", got, tc.want)
			}
		})
	}
}

// TestApprovalDependsOnInput: approval may depend on the input and the
// record, with a reason the person is shown (a late cancel that costs a
// fee needs approval, an early one does not); a
// check that fails asks for approval.
func TestApprovalDependsOnInput(t *testing.T) {
	check := func(_ context.Context, in map[string]any, record string) (bool, string, error) {
		switch {
		case record == "broken":
			return false, "", errors.New("boom")
		case in["late"] == true:
			return true, "Cancelling less than 24 hours ahead costs a €20 fee", nil
		}
		return false, "", nil
	}
	tests := []struct {
		name       string
		record     string
		late       bool
		wantAsked  bool
		wantReason string
	}{
		{"early: no approval", "b1", false, false, ""},
		{"late: approval with the reason", "b1", true, true, "Cancelling less than 24 hours ahead costs a €20 fee"},
		{"a failing check asks", "broken", false, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ap := &scriptApprover{mode: "deny"}
			e := newEnv(t, WithApprover(ap, time.Minute))
			var ran atomic.Int64
			mustDeclare(t, e.rt, Action{ID: "cancel", Title: "Cancel booking", Approval: true, ApprovalFor: check,
				Record: &RecordRef{Kind: "booking"}, Params: map[string]Param{"late": {Type: "boolean"}}, Run: counter(&ran, nil)})
			if _, err := e.rt.DeclareRecords(Records{Kind: "booking", Read: func(context.Context) ([]RecordItem, error) {
				return []RecordItem{{ID: "b1", Label: "Haircut, Friday 10:00"}, {ID: "broken", Label: "x"}}, nil
			}}); err != nil {
				t.Fatal(err)
			}
			_, res := e.invoke("cancel@booking", map[string]any{"record": tc.record, "late": tc.late})
			if asked := len(ap.got) == 1; asked != tc.wantAsked {
				t.Fatalf("asked a person: %v, want %v", asked, tc.wantAsked)
			}
			if !tc.wantAsked {
				if res.Error != nil || ran.Load() != 1 {
					t.Fatalf("ran %d times, error %+v; want it to run without approval", ran.Load(), res.Error)
				}
				return
			}
			if ap.got[0].Reason != tc.wantReason {
				t.Errorf("reason %q, want %q", ap.got[0].Reason, tc.wantReason)
			}
			if res.Error == nil || res.Error.Code != string(perr.PermissionDenied) || ran.Load() != 0 {
				t.Errorf("denied: ran %d times, error %+v", ran.Load(), res.Error)
			}
		})
	}
}

// TestApprovalSummaryIsBound: the page's summary is what the person sees
// and is part of the binding, so the same input with another summary is
// another binding (a decision for one approves no other); a summary that
// fails denies the invoke.
func TestApprovalSummaryIsBound(t *testing.T) {
	summary := "Deposit €30 for a haircut on Friday 10:00"
	run := func(t *testing.T, sum func(context.Context, map[string]any, string) (string, error)) (*scriptApprover, schema.SurfaceInvokeResult, int64) {
		ap := &scriptApprover{mode: "approve"}
		e := newEnv(t, WithApprover(ap, time.Minute))
		var ran atomic.Int64
		mustDeclare(t, e.rt, Action{ID: "booking.confirm", Title: "Confirm booking", Approval: true, ApprovalSummary: sum, Run: counter(&ran, nil)})
		_, res := e.invoke("booking.confirm", nil)
		return ap, res, ran.Load()
	}
	ap1, res, n := run(t, func(context.Context, map[string]any, string) (string, error) { return summary, nil })
	if res.Error != nil || n != 1 {
		t.Fatalf("ran %d times, error %+v", n, res.Error)
	}
	if got := ap1.got[0].Summary; got != summary {
		t.Errorf("summary %q, want %q", got, summary)
	}
	ap2, _, _ := run(t, func(context.Context, map[string]any, string) (string, error) { return "Deposit €300", nil })
	ap3, _, _ := run(t, nil)
	if ap1.got[0].Binding == ap2.got[0].Binding {
		t.Error("two summaries of the same input have one binding")
	}
	if ap3.got[0].Summary != "booking.confirm" {
		t.Errorf("without a page summary the summary is %q, want the capability", ap3.got[0].Summary)
	}
	for name, f := range map[string]func(context.Context, map[string]any, string) (string, error){
		"fails": func(context.Context, map[string]any, string) (string, error) { return "", errors.New("boom") },
		"empty": func(context.Context, map[string]any, string) (string, error) { return "  ", nil },
	} {
		t.Run(name, func(t *testing.T) {
			ap, res, n := run(t, f)
			if len(ap.got) != 0 || n != 0 || res.Error == nil || res.Error.Code != string(perr.PermissionDenied) {
				t.Errorf("asked %d, ran %d, error %+v; want PERMISSION_DENIED before asking", len(ap.got), n, res.Error)
			}
		})
	}
}
