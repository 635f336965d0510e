package runtime

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/internal/testing/jsontrees"
	"github.com/pling-go/pling/schema"
)

// challengeJSON invokes capability with input through an approving
// backend and returns the challenge it was shown, as JSON, without the
// fields every challenge has (binding, capability, title, risk, summary,
// expiry): what a person sees of the input.
func challengeJSON(t *testing.T, e *tenv, ap *scriptApprover, capability string, input map[string]any) map[string]any {
	t.Helper()
	ap.mu.Lock()
	ap.got = nil
	ap.mu.Unlock()
	if _, res := e.invoke(capability, input); res.Error != nil {
		t.Fatalf("invoke %s: %+v", capability, res.Error)
	}
	if len(ap.got) != 1 {
		t.Fatalf("%d challenges shown, want 1", len(ap.got))
	}
	b, err := json.Marshal(ap.got[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"binding", "capability", "title", "risk", "summary", "expiresAtMs"} {
		delete(m, k)
	}
	return m
}

// TestApprovalChallengeShowsInput: the person sees what the decision is
// bound to — every input value under its parameter's description, the
// record's label — redacted of credentials, escaped where a character
// would not show faithfully, and cut visibly to a bound (finding: a
// challenge without the input made {amount: 5} and {amount: 500000}
// the same dialog).
func TestApprovalChallengeShowsInput(t *testing.T) {
	ap := &scriptApprover{mode: "approve"}
	e := newEnv(t, WithApprover(ap, time.Minute))
	var ran atomic.Int64
	mustDeclare(t, e.rt, Action{ID: "transfer", Title: "Transfer money", Risk: schema.RiskDestructive, Approval: true,
		Params: map[string]Param{
			"amount":   {Type: "number", Required: true, Description: "Amount in EUR"},
			"to":       {Type: "string", Required: true},
			"note":     {Type: "string"},
			"password": {Type: "string"},
			"meta":     {Type: "object"},
			"tags":     {Type: "array"},
		}, Run: counter(&ran, nil)})
	mustDeclare(t, e.rt, Action{ID: "refund", Title: "Refund", Approval: true, Record: &RecordRef{Kind: "order"},
		Params: map[string]Param{"reason": {Type: "string", Description: "Why the order is refunded"}}, Run: counter(&ran, nil)})
	if _, err := e.rt.DeclareRecords(Records{Kind: "order", Read: func(context.Context) ([]RecordItem, error) {
		return []RecordItem{{ID: "ord_1", Label: "#1001 · Ada Jensen · €12.00"}, {ID: "ord_2", Label: "evil\u202Egnp.exe"}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	many := map[string]Param{}
	manyIn := map[string]any{}
	for i := range 25 {
		k := "p" + string(rune('a'+i))
		many[k] = Param{Type: "integer"}
		manyIn[k] = i
	}
	mustDeclare(t, e.rt, Action{ID: "many", Title: "Many", Approval: true, Params: many, Run: counter(&ran, nil)})
	long := strings.Repeat("x", 5000)

	field := func(name, title, value string, flags ...string) map[string]any {
		f := map[string]any{"name": name, "title": title, "value": value}
		for _, fl := range flags {
			k, v, _ := strings.Cut(fl, "=")
			if v == "" {
				f[k] = true
			} else {
				f[k] = json.Number(v)
			}
		}
		return f
	}
	tests := []struct {
		name  string
		cap   string
		input map[string]any
		want  map[string]any
	}{
		{"small transfer", "transfer", map[string]any{"amount": 5, "to": "alice"}, map[string]any{
			"input": []any{field("amount", "Amount in EUR", "5"), field("to", "to", "alice")}}},
		{"large transfer differs", "transfer", map[string]any{"amount": 500000, "to": "mallory"}, map[string]any{
			"input": []any{field("amount", "Amount in EUR", "500000"), field("to", "to", "mallory")}}},
		{"numbers in canonical form", "transfer", map[string]any{"amount": json.Number("5.0e2"), "to": "bob"}, map[string]any{
			"input": []any{field("amount", "Amount in EUR", "500"), field("to", "to", "bob")}}},
		{"objects and arrays as canonical JSON", "transfer", map[string]any{"amount": 1, "to": "bob",
			"meta": map[string]any{"z": 1, "a": "b"}, "tags": []any{"x", true, nil}}, map[string]any{
			"input": []any{field("amount", "Amount in EUR", "1"), field("meta", "meta", `{"a":"b","z":1}`),
				field("tags", "tags", `["x",true,null]`), field("to", "to", "bob")}}},
		{"a secret is redacted by its name", "transfer", map[string]any{"amount": 1, "to": "bob", "password": "hunter2"}, map[string]any{
			"input": []any{field("amount", "Amount in EUR", "1"), field("password", "password", "[REDACTED]", "redacted"),
				field("to", "to", "bob")}}},
		{"a credential is redacted by its shape", "transfer", map[string]any{"amount": 1, "to": "bob",
			"note": "use Bearer abcdefghijklmnop", "meta": map[string]any{"apiKey": "k-1", "ok": "yes"}}, map[string]any{
			"input": []any{field("amount", "Amount in EUR", "1"), field("meta", "meta", `{"apiKey":"[REDACTED]","ok":"yes"}`, "redacted"),
				field("note", "note", "use [REDACTED]", "redacted"), field("to", "to", "bob")}}},
		{"a bidi override is shown escaped", "transfer", map[string]any{"amount": 1, "to": "bob\u202E0000001"}, map[string]any{
			"input": []any{field("amount", "Amount in EUR", "1"), field("to", "to", `bob\u{202E}0000001`, "escaped")}}},
		{"control characters are shown escaped, backslashes doubled", "transfer", map[string]any{"amount": 1, "to": "a\\b\nc\x00\u200Bd"}, map[string]any{
			"input": []any{field("amount", "Amount in EUR", "1"), field("to", "to", `a\\b\nc\u{0}\u{200B}d`, "escaped")}}},
		{"a plain backslash is shown as is", "transfer", map[string]any{"amount": 1, "to": `C:\x`}, map[string]any{
			"input": []any{field("amount", "Amount in EUR", "1"), field("to", "to", `C:\x`)}}},
		{"an empty string stays empty", "transfer", map[string]any{"amount": 1, "to": ""}, map[string]any{
			"input": []any{field("amount", "Amount in EUR", "1"), field("to", "to", "")}}},
		{"a long value is cut with a marker", "transfer", map[string]any{"amount": 1, "to": long}, map[string]any{
			"input": []any{field("amount", "Amount in EUR", "1"), field("to", "to", strings.Repeat("x", 199)+"…", "cut", "length=5000")}}},
		{"the record's label, not only its id", "refund@order", map[string]any{"record": "ord_1", "reason": "damaged"}, map[string]any{
			"record": map[string]any{"kind": "order", "id": "ord_1", "label": "#1001 · Ada Jensen · €12.00"},
			"input":  []any{field("reason", "Why the order is refunded", "damaged")}}},
		{"a record label is escaped too", "refund@order", map[string]any{"record": "ord_2"}, map[string]any{
			"record": map[string]any{"kind": "order", "id": "ord_2", "label": `evil\u{202E}gnp.exe`}}},
		{"at most 20 parameters, and how many more", "many", manyIn, func() map[string]any {
			var in []any
			for i := range 20 {
				k := "p" + string(rune('a'+i))
				in = append(in, field(k, k, strconv.Itoa(i)))
			}
			return map[string]any{"input": in, "more": json.Number("5")}
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := challengeJSON(t, e, ap, tt.cap, tt.input)
			if diff := cmp.Diff(jsontrees.RoundTrip(t, tt.want), jsontrees.RoundTrip(t, got)); diff != "" {
				t.Errorf("challenge of %s %v (-want +got):\n%s", tt.cap, tt.input, diff)
			}
		})
	}
}

// FuzzDisplayText: whatever a value holds, the text a person is shown
// has no character that would not show as itself, stays within its
// bound, and says when it was cut or escaped.
func FuzzDisplayText(f *testing.F) {
	for _, s := range []string{"", "alice", "bob\u202E0001", "a\\b\n", strings.Repeat("é", 300), "\xff\xfe", "x\u200By", "\u2028", "日本\u3000語"} {
		f.Add(s, 10)
		f.Add(s, 200)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 2 || max > 1000 {
			return
		}
		got := displayText(s, max)
		n := 0
		for _, r := range got.text {
			n++
			if unshowable(r) || (r == utf8.RuneError && !strings.ContainsRune(s, utf8.RuneError)) {
				t.Fatalf("displayText(%q, %d) = %q shows %U as is", s, max, got.text, r)
			}
		}
		if n > max {
			t.Fatalf("displayText(%q, %d) = %q: %d characters", s, max, got.text, n)
		}
		if got.cut != strings.HasSuffix(got.text, "…") && !strings.HasSuffix(s, "…") {
			t.Fatalf("displayText(%q, %d) = %+v: cut without its marker", s, max, got)
		}
		if !got.escaped && !got.cut && got.text != s {
			t.Fatalf("displayText(%q, %d) = %+v: changed a showable text", s, max, got)
		}
	})
}

// lateApprover approves every challenge it is shown, after a delay (a
// person who approves after the agent gave up), and keeps them.
type lateApprover struct {
	after time.Duration
	got   chan schema.SurfaceApprovalChallenge
}

func (a *lateApprover) Approve(_ context.Context, ch schema.SurfaceApprovalChallenge) <-chan schema.SurfaceApprovalDecision {
	a.got <- ch
	out := make(chan schema.SurfaceApprovalDecision, 1)
	time.AfterFunc(a.after, func() { out <- schema.SurfaceApprovalDecision{Binding: ch.Binding, Approved: true} })
	return out
}

// TestApprovalEndsWithItsCall: an approval lapses when its call's window
// ends (WithCallWindow) or its context's deadline passes, however long
// the page lets approvals wait: the challenge's expiry is the window's,
// and a person who approves after it runs nothing. Without a window the
// same late approval runs: the challenge would lapse only after the
// page's approvalTtlMs (5 min).
func TestApprovalEndsWithItsCall(t *testing.T) {
	tests := []struct {
		name    string
		ctx     func(nowMs int64) (context.Context, context.CancelFunc)
		wantRan bool
	}{
		{"no window: a late approval runs", func(int64) (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, true},
		{"the call's window ended", func(now int64) (context.Context, context.CancelFunc) {
			return context.WithCancel(WithCallWindow(context.Background(), now+150))
		}, false},
		{"the context's deadline passed", func(int64) (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 150*time.Millisecond)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ap := &lateApprover{after: 400 * time.Millisecond, got: make(chan schema.SurfaceApprovalChallenge, 1)}
			var ran atomic.Bool
			rt := New(WithExpose("*"), WithApprover(ap, 5*time.Minute))
			if _, err := rt.DeclareAction(Action{ID: "wipe", Title: "Wipe", Risk: "destructive", Approval: true,
				Run: func(context.Context, *Call) (any, error) { ran.Store(true); return true, nil }}); err != nil {
				t.Fatal(err)
			}
			now := time.Now().UnixMilli()
			ctx, cancel := tt.ctx(now)
			defer cancel()
			out := rt.Handle(ctx, []byte(`{"protocol":"pling.surface/0.1","id":"w1","method":"invoke","capability":"wipe"}`))
			ch := <-ap.got
			if !tt.wantRan && ch.ExpiresAtMs > now+200 {
				t.Errorf("the challenge lapses %d ms after the call began, want with its window (150 ms)", ch.ExpiresAtMs-now)
			}
			if ran.Load() != tt.wantRan {
				t.Errorf("ran %v, want %v: %s", ran.Load(), tt.wantRan, out)
			}
		})
	}
}

// answeringApprover approves at once; asRequest makes it a
// RequestApprover (an approval backend outside the page).
type answeringApprover struct{}

func (answeringApprover) Approve(_ context.Context, ch schema.SurfaceApprovalChallenge) <-chan schema.SurfaceApprovalDecision {
	out := make(chan schema.SurfaceApprovalDecision, 1)
	out <- schema.SurfaceApprovalDecision{Binding: ch.Binding, Approved: true, Approval: "pa1.k.signed.sig"}
	return out
}

type requestApprover struct{ answeringApprover }

func (r requestApprover) ApproveRequest(ctx context.Context, ch schema.SurfaceApprovalChallenge, _ ApprovalRequest) <-chan schema.SurfaceApprovalDecision {
	return r.Approve(ctx, ch)
}

// TestWaitingSaysApprovalOutside: the Waiting notice of an approval asked
// of a RequestApprover (the authority's screen) says Outside, so an
// agent's tool does not tell its user that nobody can see the browser;
// one asked in the page does not. The handler's call carries the
// approval the backend signed.
func TestWaitingSaysApprovalOutside(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ap           Approver
		wantOutside  bool
		wantApproval string
	}{
		{"in the page", answeringApprover{}, false, "pa1.k.signed.sig"},
		{"the authority's screen", requestApprover{}, true, "pa1.k.signed.sig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []Waiting
			var approval string
			rt := New(WithExpose("*"), WithApprover(tc.ap, time.Minute), WithWaiting(func(w Waiting) { got = append(got, w) }))
			if _, err := rt.DeclareAction(Action{ID: "wipe", Title: "Wipe", Risk: "destructive", Approval: true,
				Run: func(_ context.Context, c *Call) (any, error) { approval = c.Approval; return true, nil }}); err != nil {
				t.Fatal(err)
			}
			rt.Handle(context.Background(), []byte(`{"protocol":"pling.surface/0.1","id":"w1","method":"invoke","capability":"wipe"}`))
			if len(got) != 1 || got[0].Outside != tc.wantOutside {
				t.Errorf("waiting notices %+v, want one with Outside %v", got, tc.wantOutside)
			}
			if approval != tc.wantApproval {
				t.Errorf("call.Approval %q, want %q", approval, tc.wantApproval)
			}
		})
	}
}
