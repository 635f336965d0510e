package errors

import (
	"encoding/json"
	stderrors "errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNewMessage(t *testing.T) {
	tests := []struct {
		name        string
		code        Code
		message     string
		wantCode    Code
		wantMessage string
	}{
		{"default message", RateLimited, "", RateLimited, "Too many requests"},
		{"given message kept", RateLimited, "slow down", RateLimited, "slow down"},
		{"action code default", PermissionDenied, "", PermissionDenied, "Business policy denied the action"},
		{"gateway code default", GatewayInvalidJSON, "", GatewayInvalidJSON, "The request body is not valid JSON"},
		{"reserved code becomes parent", DelegationAudienceMismatch, "", DelegationBindingMismatch, "The delegation is bound to something else"},
		{"reserved code keeps given message", ContinuityStorageTimeout, "timed out after 5s", ContinuityStorageUnavailable, "timed out after 5s"},
		{"unknown code kept, message is the code", "QUOTA_EXCEEDED", "", "QUOTA_EXCEEDED", "QUOTA_EXCEEDED"},
		{"unknown code with message", "QUOTA_EXCEEDED", "over quota", "QUOTA_EXCEEDED", "over quota"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := New(tt.code, tt.message, nil)
			if e.Code() != tt.wantCode || e.Message() != tt.wantMessage {
				t.Errorf("New(%s, %q) = %s %q; want %s %q", tt.code, tt.message, e.Code(), e.Message(), tt.wantCode, tt.wantMessage)
			}
			if e.Details() != nil || e.RetryAfterMs() != 0 || e.Unwrap() != nil {
				t.Errorf("New(%s): details %v, retry %d, cause %v; want none", tt.code, e.Details(), e.RetryAfterMs(), e.Unwrap())
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"default message", New(SessionExpired, "", nil), "SESSION_EXPIRED: The session has expired"},
		{"given message", New(InvalidParams, "amount must be positive", nil), "INVALID_PARAMS: amount must be positive"},
		{"details not in the string", New(InvalidParams, "bad", map[string]any{"field": "amount"}), "INVALID_PARAMS: bad"},
		{"cause not in the string", Wrap(InternalError, "", io.ErrUnexpectedEOF), "INTERNAL_ERROR: Internal error; business success is unknown"},
		{"unknown code", New("QUOTA_EXCEEDED", "", nil), "QUOTA_EXCEEDED: QUOTA_EXCEEDED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			if got := fmt.Sprint(tt.err); got != tt.want {
				t.Errorf("fmt.Sprint = %q, want %q", got, tt.want)
			}
		})
	}
}

type causeError struct{ secret string }

func (c *causeError) Error() string { return "dial upstream: " + c.secret }

func TestWrap(t *testing.T) {
	const secret = "upstream-said-Zq9pRIVATEx7Kp2"
	cause := fmt.Errorf("read body: %w", &causeError{secret: secret})
	e := Wrap(InternalError, "", cause)

	if e.Code() != InternalError || e.Message() != "Internal error; business success is unknown" {
		t.Errorf("Wrap = %s %q", e.Code(), e.Message())
	}
	if e.Unwrap() != cause {
		t.Errorf("Unwrap() = %v, want the cause", e.Unwrap())
	}
	var ce *causeError
	if !stderrors.As(e, &ce) || ce.secret != secret {
		t.Errorf("errors.As did not find the cause")
	}
	if !stderrors.Is(e, cause) {
		t.Errorf("errors.Is(e, cause) = false")
	}
	if !stderrors.Is(Wrap(HandoffTimeout, "", io.EOF), io.EOF) {
		t.Errorf("errors.Is(Wrap(.., io.EOF), io.EOF) = false")
	}
	if !stderrors.Is(e, New(InternalError, "other", nil)) {
		t.Errorf("a wrapped error does not match its code")
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"code":"INTERNAL_ERROR","message":"Internal error; business success is unknown"}`; string(b) != want {
		t.Errorf("MarshalJSON = %s, want %s", b, want)
	}
	for name, s := range map[string]string{"MarshalJSON": string(b), "Error()": e.Error()} {
		if strings.Contains(s, secret) || strings.Contains(s, "dial upstream") {
			t.Errorf("%s carries the cause: %s", name, s)
		}
	}
	t.Run("nil cause", func(t *testing.T) {
		if e := Wrap(RateLimited, "", nil); e.Unwrap() != nil {
			t.Errorf("Unwrap() = %v, want nil", e.Unwrap())
		}
	})
}

func TestIs(t *testing.T) {
	rl := New(RateLimited, "one", nil)
	tests := []struct {
		name   string
		err    error
		target error
		want   bool
	}{
		{"same code, other message", rl, New(RateLimited, "two", nil), true},
		{"same code, other details", rl, New(RateLimited, "", map[string]any{"a": 1}), true},
		{"same value", rl, rl, true},
		{"other code", rl, New(RateLimitUnavailable, "one", nil), false},
		{"wrapped by fmt", fmt.Errorf("call: %w", rl), New(RateLimited, "", nil), true},
		{"reserved target is its parent", New(DelegationBindingMismatch, "", nil), New(DelegationAudienceMismatch, "", nil), true},
		{"not an *Error", rl, stderrors.New("RATE_LIMITED: one"), false},
		{"nil *Error target", rl, (*Error)(nil), false},
		{"through the cause", Wrap(InternalError, "", rl), New(RateLimited, "", nil), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stderrors.Is(tt.err, tt.target); got != tt.want {
				t.Errorf("errors.Is(%v, %v) = %v, want %v", tt.err, tt.target, got, tt.want)
			}
		})
	}
	t.Run("As", func(t *testing.T) {
		var pe *Error
		if !stderrors.As(fmt.Errorf("ctx: %w", rl), &pe) || pe != rl {
			t.Errorf("errors.As did not find the *Error")
		}
	})
}

func TestWithCopies(t *testing.T) {
	orig := New(RateLimited, "", map[string]any{"window": "1m"})

	retry := orig.WithRetryAfter(1500)
	if retry == orig {
		t.Fatalf("WithRetryAfter returned the receiver")
	}
	if orig.RetryAfterMs() != 0 || retry.RetryAfterMs() != 1500 {
		t.Errorf("RetryAfterMs: original %d, copy %d; want 0, 1500", orig.RetryAfterMs(), retry.RetryAfterMs())
	}
	if retry.Code() != orig.Code() || retry.Message() != orig.Message() {
		t.Errorf("WithRetryAfter changed code or message: %v", retry)
	}
	if diff := cmp.Diff(orig.Details(), retry.Details()); diff != "" {
		t.Errorf("WithRetryAfter changed details (-orig +copy):\n%s", diff)
	}

	withD := retry.WithDetails(map[string]any{"authorization": "Bearer abcdefghijkl", "limit": "10/min"})
	if withD == retry {
		t.Fatalf("WithDetails returned the receiver")
	}
	if diff := cmp.Diff(map[string]any{"window": "1m"}, retry.Details()); diff != "" {
		t.Errorf("WithDetails changed the original (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"authorization": Redacted, "limit": "10/min"}, withD.Details()); diff != "" {
		t.Errorf("WithDetails did not redact (-want +got):\n%s", diff)
	}
	if withD.RetryAfterMs() != 1500 {
		t.Errorf("WithDetails lost the retry hint")
	}
	if got := withD.WithDetails(nil).Details(); got != nil {
		t.Errorf("WithDetails(nil).Details() = %v, want nil", got)
	}
}

func TestDetailsIsACopy(t *testing.T) {
	e := New(ExpectationFailed, "", map[string]any{
		"expected": "saved",
		"record":   map[string]any{"id": "r1"},
		"seen":     []any{"draft"},
	})
	want := map[string]any{
		"expected": "saved",
		"record":   map[string]any{"id": "r1"},
		"seen":     []any{"draft"},
	}
	tests := []struct {
		name   string
		mutate func(d map[string]any)
	}{
		{"set a key", func(d map[string]any) { d["authorization"] = "Bearer attachedLater123" }},
		{"delete a key", func(d map[string]any) { delete(d, "expected") }},
		{"nested map", func(d map[string]any) {
			d["record"].(map[string]any)["authorization"] = "Bearer attachedLater123"
		}},
		{"nested slice", func(d map[string]any) { d["seen"].([]any)[0] = "sk-attachedLater12345" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.mutate(e.Details())
			if diff := cmp.Diff(want, e.Details()); diff != "" {
				t.Errorf("%s: mutating Details() changed the error (-want +got):\n%s", tt.name, diff)
			}
			b, _ := json.Marshal(e)
			if strings.Contains(string(b), "attachedLater") {
				t.Errorf("%s: attached value reached the wire: %s", tt.name, b)
			}
		})
	}
}

func TestMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"code and message", New(ActionNotFound, "", nil),
			`{"code":"ACTION_NOT_FOUND","message":"The current page has no such action"}`},
		{"retry hint", New(RateLimited, "", nil).WithRetryAfter(1500),
			`{"code":"RATE_LIMITED","message":"Too many requests","retryAfterMs":1500}`},
		{"details", New(InvalidParams, "amount must be positive", map[string]any{"field": "amount", "min": 1}),
			`{"code":"INVALID_PARAMS","message":"amount must be positive","details":{"field":"amount","min":1}}`},
		{"empty details kept", New(InvalidParams, "x", map[string]any{}),
			`{"code":"INVALID_PARAMS","message":"x"}`},
		{"redacted details", New(SessionInvalid, "", map[string]any{"cookie": "sid=abc"}),
			`{"code":"SESSION_INVALID","message":"The session is malformed or unbound","details":{"cookie":"[REDACTED]"}}`},
		{"unknown code kept", New("QUOTA_EXCEEDED", "over quota", nil),
			`{"code":"QUOTA_EXCEEDED","message":"over quota"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.err)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if string(b) != tt.want {
				t.Errorf("%s: MarshalJSON\n got %s\nwant %s", tt.name, b, tt.want)
			}
		})
	}
}

// errorFields is what a test compares of an *Error.
type errorFields struct {
	Code         Code
	Message      string
	RetryAfterMs int64
	Details      map[string]any
}

func fields(e *Error) errorFields {
	return errorFields{e.Code(), e.Message(), e.RetryAfterMs(), e.Details()}
}

func TestJSONRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
	}{
		{"plain", New(CapabilityNotExposed, "", nil)},
		{"retry", New(RateLimited, "", nil).WithRetryAfter(2500)},
		{"details of every JSON type", New(InvalidParams, "bad", map[string]any{
			"field":   "amount",
			"min":     1,
			"ratio":   0.25,
			"big":     int64(9007199254740993), // above 2^53: exact only as text
			"neg":     -7,
			"ok":      false,
			"none":    nil,
			"list":    []any{"a", 2, true},
			"nested":  map[string]any{"deeper": map[string]any{"n": 3.5}},
			"unicode": "金额必须为正 <b>&",
		})},
		{"truncated details", New(ExecutionFailed, "", map[string]any{"body": strings.Repeat("x", 2000)})},
		{"unknown code", New("QUOTA_EXCEEDED", "over quota", map[string]any{"quota": 10})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.err)
			if err != nil {
				t.Fatalf("MarshalJSON: %v", err)
			}
			var got Error
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("UnmarshalJSON(%s): %v", b, err)
			}
			if diff := cmp.Diff(fields(tt.err), fields(&got)); diff != "" {
				t.Errorf("%s: round trip (-sent +read):\n%s", tt.name, diff)
			}
			if got.Unwrap() != nil {
				t.Errorf("a decoded error has a cause")
			}
			b2, err := json.Marshal(&got)
			if err != nil || string(b2) != string(b) {
				t.Errorf("%s: re-encoding differs:\n first %s\nsecond %s (%v)", tt.name, b, b2, err)
			}
		})
	}
}

func TestUnmarshalJSON(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    errorFields
		wantErr bool
	}{
		{
			name: "known code",
			in:   `{"code":"SESSION_EXPIRED","message":"expired","retryAfterMs":0}`,
			want: errorFields{Code: SessionExpired, Message: "expired"},
		},
		{
			name: "unknown code kept",
			in:   `{"code":"QUOTA_EXCEEDED","message":"over quota","retryAfterMs":10}`,
			want: errorFields{Code: "QUOTA_EXCEEDED", Message: "over quota", RetryAfterMs: 10},
		},
		{
			// Read leniently: a peer that shipped the reserved code is
			// understood as that code (it is written as its parent).
			name: "reserved code read as itself",
			in:   `{"code":"DELEGATION_AUDIENCE_MISMATCH","message":"other origin"}`,
			want: errorFields{Code: DelegationAudienceMismatch, Message: "other origin"},
		},
		{
			name: "details from outside are redacted",
			in:   `{"code":"INVALID_REQUEST","message":"m","details":{"headers":{"Authorization":"Basic dXNlcjpwYXNzd29yZA=="},"note":"Bearer abcdefghijklmnop"}}`,
			want: errorFields{Code: InvalidRequest, Message: "m", Details: map[string]any{
				"headers": map[string]any{"Authorization": Redacted},
				"note":    Redacted,
			}},
		},
		{
			name: "details from outside are capped",
			in:   `{"code":"INVALID_REQUEST","message":"m","details":{"a":"` + strings.Repeat("y", 700) + `"}}`,
			want: errorFields{Code: InvalidRequest, Message: "m", Details: map[string]any{
				"a":         strings.Repeat("y", 600-len(`{"a":"","truncated":true}`)-len("…")) + "…",
				"truncated": true,
			}},
		},
		{
			name: "unknown fields ignored",
			in:   `{"code":"RATE_LIMITED","message":"m","cause":"hidden","extra":1}`,
			want: errorFields{Code: RateLimited, Message: "m"},
		},
		{name: "not an object", in: `"RATE_LIMITED"`, wantErr: true},
		{name: "code not a string", in: `{"code":5,"message":"m"}`, wantErr: true},
		{name: "details not an object", in: `{"code":"X","message":"m","details":[1]}`, wantErr: true},
		{name: "retry not an integer", in: `{"code":"X","message":"m","retryAfterMs":"soon"}`, wantErr: true},
		{name: "truncated JSON", in: `{"code":"X"`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Error
			err := json.Unmarshal([]byte(tt.in), &got)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("%s: UnmarshalJSON(%s) accepted it: %+v", tt.name, tt.in, fields(&got))
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: UnmarshalJSON(%s): %v", tt.name, tt.in, err)
			}
			if diff := cmp.Diff(tt.want, fields(&got)); diff != "" {
				t.Errorf("%s: (-want +got):\n%s", tt.name, diff)
			}
		})
	}
	t.Run("data after the object", func(t *testing.T) {
		var got Error
		for _, in := range []string{`{"code":"X","message":"m"} x`, `{"code":"X","message":"m"}}`, `{"code":"X","message":"m"}{}`} {
			if err := got.UnmarshalJSON([]byte(in)); err == nil {
				t.Errorf("UnmarshalJSON(%s) accepted trailing data", in)
			}
		}
		if err := got.UnmarshalJSON([]byte(" {\"code\":\"X\",\"message\":\"m\"}\n")); err != nil {
			t.Errorf("UnmarshalJSON with surrounding space: %v", err)
		}
	})
	t.Run("reserved code re-encoded as parent", func(t *testing.T) {
		var got Error
		if err := json.Unmarshal([]byte(`{"code":"DELEGATION_AUDIENCE_MISMATCH","message":"m"}`), &got); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(&got)
		if want := `{"code":"DELEGATION_BINDING_MISMATCH","message":"m"}`; string(b) != want {
			t.Errorf("MarshalJSON = %s, want %s", b, want)
		}
	})
}

func TestErrorNamespace(t *testing.T) {
	tests := []struct {
		err    *Error
		want   Namespace
		wantOK bool
	}{
		{New(RateLimited, "", nil), Surface, true},
		{New(StepFailed, "", nil), Action, true},
		{New(DelegationAudienceMismatch, "", nil), Delegation, true},
		{New(ContinuityLeaseHeld, "", nil), Continuity, true},
		{New(GatewayUnauthorized, "", nil), Gateway, true},
		{New("QUOTA_EXCEEDED", "", nil), 0, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.err.Code()), func(t *testing.T) {
			ns, ok := tt.err.Namespace()
			if ns != tt.want || ok != tt.wantOK {
				t.Errorf("Namespace() = %v, %v; want %v, %v", ns, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// FuzzErrorUnmarshalJSON checks the wire decoder on any input: it does not
// panic, what it accepts encodes again within the cap, and a second round
// trip is a fixed point.
func FuzzErrorUnmarshalJSON(f *testing.F) {
	for _, s := range []string{
		`{"code":"RATE_LIMITED","message":"Too many requests","retryAfterMs":1500}`,
		`{"code":"QUOTA_EXCEEDED","message":"over quota","details":{"quota":10}}`,
		`{"code":"DELEGATION_AUDIENCE_MISMATCH","message":"m"}`,
		`{"code":"INVALID_REQUEST","message":"m","details":{"headers":{"Authorization":"Basic dXNlcjpwYXNzd29yZA=="}}}`,
		`{"code":"X","message":"m","details":{"big":9007199254740993,"f":1e400}}`,
		`{"code":"X","message":"m","details":{"a":"` + strings.Repeat("<", 700) + `"}}`,
		`{"code":5}`,
		`{"code":"X"} x`,
		`null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var e Error
		if e.UnmarshalJSON(in) != nil {
			return
		}
		b, err := e.MarshalJSON()
		if err != nil {
			t.Fatalf("accepted %q but cannot encode it: %v", in, err)
		}
		if d := e.Details(); d != nil {
			if db, _ := json.Marshal(d); len(db) > MaxDetailsChars {
				t.Fatalf("details of %q encode to %d bytes", in, len(db))
			}
		}
		var again Error
		if err := again.UnmarshalJSON(b); err != nil {
			t.Fatalf("cannot read back %s: %v", b, err)
		}
		b2, err := again.MarshalJSON()
		if err != nil || string(b2) != string(b) {
			t.Fatalf("second round trip differs:\n%s\n%s (%v)", b, b2, err)
		}
	})
}
