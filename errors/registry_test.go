package errors

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// namespaceStatus is the one HTTP mapping function of each namespace (nil:
// the namespace has no HTTP status, docs/protocol.md §5).
var namespaceStatus = map[Namespace]func(Code) int{
	Surface:    SurfaceHTTPStatus,
	Action:     nil,
	Delegation: DelegationHTTPStatus,
	Continuity: ContinuityHTTPStatus,
	Gateway:    GatewayHTTPStatus,
}

// entryProblems lists what is missing or inconsistent in one entry's
// metadata (docs/protocol.md §5: every entry carries code, namespace, default
// message, retriable, executed for protocol codes, HTTP status where the
// namespace has one, recovery hint and i18n keys). An empty result means the
// entry is complete. A reserved entry's parent is checked against the
// package registry.
func entryProblems(e Entry) []string {
	var p []string
	add := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }

	if e.Code == "" {
		add("empty code")
	}
	if !slices.Contains(Namespaces(), e.Namespace) {
		add("namespace not set: %v", e.Namespace)
	}
	for _, t := range []struct {
		name string
		text Text
	}{{"Message", e.Message}, {"Action", e.Action}} {
		if strings.TrimSpace(t.text.En) == "" {
			add("%s.En empty", t.name)
		}
		switch {
		case strings.TrimSpace(t.text.Zh) == "":
			add("%s.Zh empty", t.name)
		case !hasHan(t.text.Zh):
			add("%s.Zh has no Chinese characters: %q", t.name, t.text.Zh)
		}
	}
	if e.Recovery == RecoverNone {
		add("Recovery is RecoverNone")
	} else if int(e.Recovery) >= len(recoveryNames) {
		add("Recovery %v is not a known hint", e.Recovery)
	}
	if want := "errors." + string(e.Code); e.MessageKey() != want {
		add("MessageKey %q, want %q", e.MessageKey(), want)
	}
	if want := "errors." + string(e.Code) + ".action"; e.ActionKey() != want {
		add("ActionKey %q, want %q", e.ActionKey(), want)
	}

	// HTTP status: zero for Action (it rides in an ok:true response), an
	// error status from the namespace's mapping function elsewhere.
	switch status, hasStatus := namespaceStatus[e.Namespace]; {
	case !hasStatus:
		// namespace already reported
	case status == nil:
		if e.HTTPStatus != 0 {
			add("HTTPStatus %d in a namespace without HTTP status", e.HTTPStatus)
		}
	case e.HTTPStatus < 400 || e.HTTPStatus > 599:
		add("HTTPStatus %d is not an error status", e.HTTPStatus)
	case e.HTTPStatus != status(e.Code):
		add("HTTPStatus %d, but the %v mapping says %d", e.HTTPStatus, e.Namespace, status(e.Code))
	}

	// Executed: docs/protocol.md §5's column for Surface codes, not applicable
	// elsewhere.
	wantExec := ExecutedNotApplicable
	if e.Namespace == Surface {
		wantExec = ExecutedNo
		if e.Code == InternalError {
			wantExec = ExecutedUnconfirmed
		}
	}
	if e.Executed != wantExec {
		add("Executed %q, want %q", e.Executed, wantExec)
	}

	// Retriable must agree with the recovery hint: waiting and retrying
	// later resend the same request; the others change it or stop.
	switch e.Recovery {
	case RecoverWait, RecoverRetryLater:
		if !e.Retriable {
			add("Recovery %v but not Retriable", e.Recovery)
		}
	case RecoverFixRequest, RecoverFixParams, RecoverStop, RecoverUpgrade,
		RecoverFixDeclaration, RecoverCheckPrevious, RecoverReauthenticate:
		if e.Retriable {
			add("Recovery %v but Retriable", e.Recovery)
		}
	}
	if e.Code == InternalError && e.Retriable {
		add("INTERNAL_ERROR must not be retriable (docs/protocol.md §5: never resend a write)")
	}

	if e.Reserved() {
		parent, ok := Lookup(e.Parent)
		switch {
		case e.Parent == e.Code:
			add("reserved code is its own parent")
		case !ok:
			add("reserved parent %s is not in the registry", e.Parent)
		case parent.Reserved():
			add("reserved parent %s is itself reserved", e.Parent)
		case parent.Namespace != e.Namespace:
			add("reserved parent %s is in namespace %v, not %v", e.Parent, parent.Namespace, e.Namespace)
		}
	}
	return p
}

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

func allCodes() []Code {
	var out []Code
	for _, ns := range Namespaces() {
		out = append(out, Codes(ns)...)
	}
	return out
}

func TestRegistryComplete(t *testing.T) {
	for _, ns := range Namespaces() {
		codes := Codes(ns)
		if len(codes) == 0 {
			t.Errorf("namespace %v has no codes", ns)
		}
		for _, c := range codes {
			t.Run(ns.String()+"/"+string(c), func(t *testing.T) {
				e, ok := Lookup(c)
				if !ok {
					t.Fatalf("Lookup(%s) not found", c)
				}
				if e.Code != c {
					t.Errorf("Lookup(%s).Code = %s", c, e.Code)
				}
				if e.Namespace != ns {
					t.Errorf("Lookup(%s).Namespace = %v, want %v", c, e.Namespace, ns)
				}
				if p := entryProblems(e); len(p) > 0 {
					t.Errorf("%s: incomplete metadata:\n  %s", c, strings.Join(p, "\n  "))
				}
			})
		}
	}
}

// TestEntryProblems proves the completeness check can fail: each case breaks
// one piece of a complete entry.
func TestEntryProblems(t *testing.T) {
	base := func(c Code) Entry {
		e, ok := Lookup(c)
		if !ok {
			t.Fatalf("Lookup(%s) not found", c)
		}
		return e
	}
	tests := []struct {
		name  string
		entry Entry
		want  []string
	}{
		{name: "complete surface entry", entry: base(RateLimited)},
		{name: "complete action entry", entry: base(PermissionDenied)},
		{name: "complete reserved entry", entry: base(DelegationAudienceMismatch)},
		{name: "complete INTERNAL_ERROR", entry: base(InternalError)},
		{
			name:  "empty code",
			entry: func() Entry { e := base(PermissionDenied); e.Code = ""; return e }(),
			want:  []string{"empty code"},
		},
		{
			name:  "namespace not set",
			entry: func() Entry { e := base(PermissionDenied); e.Namespace = 0; return e }(),
			want:  []string{"namespace not set: namespace(0)"},
		},
		{
			name:  "namespace out of range",
			entry: func() Entry { e := base(PermissionDenied); e.Namespace = 9; return e }(),
			want:  []string{"namespace not set: namespace(9)"},
		},
		{
			name:  "no English message",
			entry: func() Entry { e := base(PermissionDenied); e.Message.En = ""; return e }(),
			want:  []string{"Message.En empty"},
		},
		{
			name:  "blank English message",
			entry: func() Entry { e := base(PermissionDenied); e.Message.En = "  "; return e }(),
			want:  []string{"Message.En empty"},
		},
		{
			name:  "no Chinese message",
			entry: func() Entry { e := base(PermissionDenied); e.Message.Zh = ""; return e }(),
			want:  []string{"Message.Zh empty"},
		},
		{
			name:  "Chinese message copied from English",
			entry: func() Entry { e := base(PermissionDenied); e.Message.Zh = e.Message.En; return e }(),
			want:  []string{`Message.Zh has no Chinese characters: "Business policy denied the action"`},
		},
		{
			name:  "no English action",
			entry: func() Entry { e := base(PermissionDenied); e.Action.En = ""; return e }(),
			want:  []string{"Action.En empty"},
		},
		{
			name:  "no Chinese action",
			entry: func() Entry { e := base(PermissionDenied); e.Action.Zh = ""; return e }(),
			want:  []string{"Action.Zh empty"},
		},
		{
			name:  "Chinese action not Chinese",
			entry: func() Entry { e := base(PermissionDenied); e.Action.Zh = "Stop."; return e }(),
			want:  []string{`Action.Zh has no Chinese characters: "Stop."`},
		},
		{
			name:  "no recovery",
			entry: func() Entry { e := base(PermissionDenied); e.Recovery = RecoverNone; return e }(),
			want:  []string{"Recovery is RecoverNone"},
		},
		{
			name:  "unknown recovery",
			entry: func() Entry { e := base(PermissionDenied); e.Recovery = 200; return e }(),
			want:  []string{"Recovery recovery(200) is not a known hint"},
		},
		{
			name:  "action code with HTTP status",
			entry: func() Entry { e := base(PermissionDenied); e.HTTPStatus = 403; return e }(),
			want:  []string{"HTTPStatus 403 in a namespace without HTTP status"},
		},
		{
			name:  "surface code without HTTP status",
			entry: func() Entry { e := base(InvalidRequest); e.HTTPStatus = 0; return e }(),
			want:  []string{"HTTPStatus 0 is not an error status"},
		},
		{
			name:  "delegation code without HTTP status",
			entry: func() Entry { e := base(DelegationRevoked); e.HTTPStatus = 0; return e }(),
			want:  []string{"HTTPStatus 0 is not an error status"},
		},
		{
			name:  "continuity code without HTTP status",
			entry: func() Entry { e := base(ContinuityLeaseHeld); e.HTTPStatus = 0; return e }(),
			want:  []string{"HTTPStatus 0 is not an error status"},
		},
		{
			name:  "gateway code without HTTP status",
			entry: func() Entry { e := base(GatewayInvalidJSON); e.HTTPStatus = 0; return e }(),
			want:  []string{"HTTPStatus 0 is not an error status"},
		},
		{
			name:  "HTTP status disagrees with the mapping",
			entry: func() Entry { e := base(GatewayInvalidJSON); e.HTTPStatus = 418; return e }(),
			want:  []string{"HTTPStatus 418, but the gateway mapping says 400"},
		},
		{
			name:  "surface code without Executed",
			entry: func() Entry { e := base(RateLimited); e.Executed = ExecutedNotApplicable; return e }(),
			want:  []string{`Executed "", want "no"`},
		},
		{
			name:  "INTERNAL_ERROR claims not executed",
			entry: func() Entry { e := base(InternalError); e.Executed = ExecutedNo; return e }(),
			want:  []string{`Executed "no", want "unconfirmed"`},
		},
		{
			name:  "surface code claims unconfirmed",
			entry: func() Entry { e := base(SessionExpired); e.Executed = ExecutedUnconfirmed; return e }(),
			want:  []string{`Executed "unconfirmed", want "no"`},
		},
		{
			name:  "action code with Executed",
			entry: func() Entry { e := base(ExpectationFailed); e.Executed = ExecutedNo; return e }(),
			want:  []string{`Executed "no", want ""`},
		},
		{
			name:  "wait without retriable",
			entry: func() Entry { e := base(RateLimited); e.Retriable = false; return e }(),
			want:  []string{"Recovery wait but not Retriable"},
		},
		{
			name:  "stop but retriable",
			entry: func() Entry { e := base(PermissionDenied); e.Retriable = true; return e }(),
			want:  []string{"Recovery stop but Retriable"},
		},
		{
			name:  "INTERNAL_ERROR retriable",
			entry: func() Entry { e := base(InternalError); e.Retriable = true; return e }(),
			want:  []string{"INTERNAL_ERROR must not be retriable (docs/protocol.md §5: never resend a write)"},
		},
		{
			name:  "reserved with unknown parent",
			entry: func() Entry { e := base(DelegationAudienceMismatch); e.Parent = "NO_SUCH_CODE"; return e }(),
			want:  []string{"reserved parent NO_SUCH_CODE is not in the registry"},
		},
		{
			name:  "reserved with reserved parent",
			entry: func() Entry { e := base(ContinuityStorageTimeout); e.Parent = DelegationAudienceMismatch; return e }(),
			want:  []string{"reserved parent DELEGATION_AUDIENCE_MISMATCH is itself reserved"},
		},
		{
			name:  "reserved with parent in another namespace",
			entry: func() Entry { e := base(DelegationAudienceMismatch); e.Parent = PermissionDenied; return e }(),
			want:  []string{"reserved parent PERMISSION_DENIED is in namespace action, not delegation"},
		},
		{
			name:  "reserved as its own parent",
			entry: func() Entry { e := base(DelegationAudienceMismatch); e.Parent = e.Code; return e }(),
			want:  []string{"reserved code is its own parent"},
		},
		{
			name:  "zero entry",
			entry: Entry{},
			want: []string{
				"empty code",
				"namespace not set: namespace(0)",
				"Message.En empty", "Message.Zh empty",
				"Action.En empty", "Action.Zh empty",
				"Recovery is RecoverNone",
			},
		},
		{
			name:  "code only",
			entry: Entry{Code: "BRAND_NEW", Namespace: Continuity},
			want: []string{
				"Message.En empty", "Message.Zh empty",
				"Action.En empty", "Action.Zh empty",
				"Recovery is RecoverNone",
				"HTTPStatus 0 is not an error status",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := entryProblems(tt.entry)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s: entryProblems mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// The codes the protocol names: docs/protocol.md §5.1–5.2 (protocol and business tables),
// docs/protocol.md §5.1 and the gateway codes of docs/protocol.md §5.
var (
	seedSurfaceCodes = []Code{
		"INVALID_REQUEST",
		"PROTOCOL_VERSION_UNSUPPORTED",
		"METHOD_NOT_SUPPORTED",
		"CAPABILITY_NOT_EXPOSED",
		"SESSION_REQUIRED",
		"SESSION_INVALID",
		"SESSION_EXPIRED",
		"SESSION_REVOKED",
		"RATE_LIMITED",
		"RATE_LIMIT_UNAVAILABLE",
		"REPLAY_DETECTED",
		"REPLAY_GUARD_UNAVAILABLE",
		"INTERNAL_ERROR",
	}
	seedActionCodes = []Code{
		"DUPLICATE_ACTION_ID",
		"DUPLICATE_STATE_KEY",
		"DUPLICATE_GUIDE_TARGET",
		"ACTION_NOT_FOUND",
		"INVALID_ARGS",
		"INVALID_PARAMS",
		"PERMISSION_DENIED",
		"ACTION_UNAVAILABLE",
		"EXECUTION_FAILED",
		"EXPECTATION_FAILED",
		"HANDOFF_CANCELLED",
		"HANDOFF_TIMEOUT",
		"HANDOFF_FAILED",
		"STEP_FAILED",
		"HOOK_BLOCKED",
		"LOOP_DETECTED",
	}
	specGatewayCodes = []Code{
		"INVALID_JSON",
		"MODEL_REQUIRED",
		"MODEL_NOT_ALLOWED",
		"UNAUTHORIZED",
		"PAYLOAD_TOO_LARGE",
		"UPSTREAM_TIMEOUT",
		"UPSTREAM_RATE_LIMITED",
		"GATEWAY_MISCONFIGURED",
	}
)

func TestSeedCoverage(t *testing.T) {
	if len(seedSurfaceCodes) != 13 || len(seedActionCodes) != 16 || len(specGatewayCodes) != 8 {
		t.Fatalf("seed lists have %d/%d/%d codes, want 13/16/8",
			len(seedSurfaceCodes), len(seedActionCodes), len(specGatewayCodes))
	}
	groups := []struct {
		ns    Namespace
		codes []Code
		exact bool // the namespace holds these codes and no others
	}{
		{Surface, seedSurfaceCodes, true},
		{Action, seedActionCodes, true},
		{Gateway, specGatewayCodes, false},
	}
	for _, g := range groups {
		for _, c := range g.codes {
			t.Run(g.ns.String()+"/"+string(c), func(t *testing.T) {
				if !c.Known() {
					t.Fatalf("%s is not in the registry", c)
				}
				ns, _ := c.Namespace()
				if ns != g.ns {
					t.Errorf("%s is in namespace %v, want %v", c, ns, g.ns)
				}
				if e, _ := Lookup(c); e.Reserved() {
					t.Errorf("%s is reserved (parent %s); the seeds ship it", c, e.Parent)
				}
			})
		}
		if g.exact {
			t.Run(g.ns.String()+"/exact", func(t *testing.T) {
				got := slices.Sorted(slices.Values(Codes(g.ns)))
				want := slices.Sorted(slices.Values(g.codes))
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("namespace %v codes differ from the seeds (-seeds +registry):\n%s", g.ns, diff)
				}
			})
		}
	}
}

// TestSeedRecoveryRules checks the recovery rules of docs/protocol.md §5.7 are in the
// registry as code (docs/protocol.md §5), not only as prose.
func TestSeedRecoveryRules(t *testing.T) {
	tests := []struct {
		code          Code
		want          Recovery
		wantRetriable bool
	}{
		{InvalidRequest, RecoverFixRequest, false},
		{CapabilityNotExposed, RecoverDescribe, false},
		{ActionNotFound, RecoverDescribe, false},
		{ActionUnavailable, RecoverSatisfyPreconditions, false},
		{InvalidParams, RecoverFixParams, false},
		{PermissionDenied, RecoverStop, false},
		{ExpectationFailed, RecoverObserve, false},
		{RateLimited, RecoverWait, true},
		{ReplayDetected, RecoverCheckPrevious, false},
		{SessionRequired, RecoverReauthenticate, false},
		{SessionInvalid, RecoverReauthenticate, false},
		{SessionExpired, RecoverReauthenticate, false},
		{SessionRevoked, RecoverReauthenticate, false},
		{InternalError, RecoverObserve, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.code), func(t *testing.T) {
			e, ok := Lookup(tt.code)
			if !ok {
				t.Fatalf("%s not found", tt.code)
			}
			if e.Recovery != tt.want || e.Retriable != tt.wantRetriable {
				t.Errorf("%s: Recovery %v Retriable %v, want %v %v", tt.code, e.Recovery, e.Retriable, tt.want, tt.wantRetriable)
			}
		})
	}
}

func TestCodeRoundTrip(t *testing.T) {
	// Reserved codes are read as themselves but written as their parent:
	// docs/protocol.md §5.6, "until shipped, implementations use the canonical
	// parent", so this build never puts a reserved code on the wire.
	wantWritten := map[Code]Code{
		DelegationAudienceMismatch: DelegationBindingMismatch,
		ContinuityStorageTimeout:   ContinuityStorageUnavailable,
	}
	for _, c := range allCodes() {
		t.Run(string(c), func(t *testing.T) {
			got, known := ParseCode(string(c))
			if got != c || !known {
				t.Errorf("ParseCode(%q) = %q, %v; want %q, true", c, got, known, c)
			}
			var u Code
			if err := u.UnmarshalText([]byte(c)); err != nil || u != c {
				t.Errorf("UnmarshalText(%q) = %q, %v; want %q, nil", c, u, err, c)
			}
			want := c
			if w, ok := wantWritten[c]; ok {
				want = w
			}
			b, err := c.MarshalText()
			if err != nil || string(b) != string(want) {
				t.Errorf("%s.MarshalText() = %q, %v; want %q", c, b, err, want)
			}
			if Canonical(c) != want {
				t.Errorf("Canonical(%s) = %s, want %s", c, Canonical(c), want)
			}
			// Through encoding/json, which uses the text methods.
			j, err := json.Marshal(map[string]Code{"code": c})
			if err != nil || string(j) != `{"code":"`+string(want)+`"}` {
				t.Errorf("json.Marshal(%s) = %s, %v", c, j, err)
			}
			var back struct{ Code Code }
			if err := json.Unmarshal([]byte(`{"Code":"`+string(c)+`"}`), &back); err != nil || back.Code != c {
				t.Errorf("json.Unmarshal(%s) = %q, %v", c, back.Code, err)
			}
		})
	}
	for c := range wantWritten {
		e, _ := Lookup(c)
		if !e.Reserved() {
			t.Errorf("%s: expected a reserved code", c)
		}
	}
}

func TestUnknownCodesKept(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"newer peer's code", "QUOTA_EXCEEDED"},
		{"empty", ""},
		{"lower case is not the same code", "rate_limited"},
		{"surrounding space", " RATE_LIMITED"},
		{"unicode", "错误"},
		{"i18n key is not a code", "errors.RATE_LIMITED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, known := ParseCode(tt.in)
			if string(c) != tt.in || known {
				t.Errorf("ParseCode(%q) = %q, %v; want unchanged, false", tt.in, c, known)
			}
			var u Code = "PREVIOUS"
			if err := u.UnmarshalText([]byte(tt.in)); err != nil || string(u) != tt.in {
				t.Errorf("UnmarshalText(%q) = %q, %v; want it kept", tt.in, u, err)
			}
			b, err := Code(tt.in).MarshalText()
			if err != nil || string(b) != tt.in {
				t.Errorf("MarshalText(%q) = %q, %v; want it kept", tt.in, b, err)
			}
			if Canonical(Code(tt.in)) != Code(tt.in) {
				t.Errorf("Canonical(%q) = %q", tt.in, Canonical(Code(tt.in)))
			}
			if Code(tt.in).Known() {
				t.Errorf("Known(%q) = true", tt.in)
			}
			if ns, ok := Code(tt.in).Namespace(); ok || ns != 0 {
				t.Errorf("Namespace(%q) = %v, %v; want 0, false", tt.in, ns, ok)
			}
			if _, ok := Lookup(Code(tt.in)); ok {
				t.Errorf("Lookup(%q) found", tt.in)
			}
		})
	}
}

func TestNamespacesDisjoint(t *testing.T) {
	seen := map[Code]Namespace{}
	for _, ns := range Namespaces() {
		for _, c := range Codes(ns) {
			if prev, dup := seen[c]; dup {
				t.Errorf("%s is in namespaces %v and %v", c, prev, ns)
			}
			seen[c] = ns
		}
	}
	if len(seen) != len(defaultRegistry().entries) {
		t.Errorf("namespaces hold %d codes, the registry %d", len(seen), len(defaultRegistry().entries))
	}
	for _, ns := range []Namespace{0, Gateway + 1} {
		if got := Codes(ns); got != nil {
			t.Errorf("Codes(%v) = %v, want none", ns, got)
		}
	}
}

func TestNamesAreStable(t *testing.T) {
	tests := []struct {
		name string
		got  fmt.Stringer
		want string
	}{
		{"namespace surface", Surface, "surface"},
		{"namespace action", Action, "action"},
		{"namespace delegation", Delegation, "delegation"},
		{"namespace continuity", Continuity, "continuity"},
		{"namespace gateway", Gateway, "gateway"},
		{"namespace unknown", Namespace(42), "namespace(42)"},
		{"executed n/a", ExecutedNotApplicable, ""},
		{"executed no", ExecutedNo, "no"},
		{"executed unconfirmed", ExecutedUnconfirmed, "unconfirmed"},
		{"executed unknown", Executed(9), ""},
		{"recovery none", RecoverNone, "none"},
		{"recovery fix-request", RecoverFixRequest, "fix-request"},
		{"recovery fix-params", RecoverFixParams, "fix-params"},
		{"recovery describe", RecoverDescribe, "describe"},
		{"recovery satisfy-preconditions", RecoverSatisfyPreconditions, "satisfy-preconditions"},
		{"recovery stop", RecoverStop, "stop"},
		{"recovery observe", RecoverObserve, "observe"},
		{"recovery wait", RecoverWait, "wait"},
		{"recovery retry-later", RecoverRetryLater, "retry-later"},
		{"recovery check-previous", RecoverCheckPrevious, "check-previous"},
		{"recovery reauthenticate", RecoverReauthenticate, "reauthenticate"},
		{"recovery resume", RecoverResume, "resume"},
		{"recovery fix-declaration", RecoverFixDeclaration, "fix-declaration"},
		{"recovery upgrade", RecoverUpgrade, "upgrade"},
		{"recovery unknown", Recovery(99), "recovery(99)"},
		{"code", RateLimited, "RATE_LIMITED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.got.String(); got != tt.want {
				t.Errorf("%s: String() = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

// testEntry is a complete entry for registries built by tests.
func testEntry(ns Namespace, c, parent Code) Entry {
	return Entry{Code: c, Namespace: ns, Parent: parent, Recovery: RecoverStop,
		Message: Text{"m", "消息"}, Action: Text{"a", "动作"}}
}

func TestRegistryAliasesAndReserved(t *testing.T) {
	r, err := newRegistry([]Entry{
		testEntry(Surface, "NEW_NAME", ""),
		testEntry(Surface, "NEW_NAME_DETAIL", "NEW_NAME"),
		testEntry(Action, "OTHER", ""),
	}, map[string]Code{"OLD_NAME": "NEW_NAME", "OLDER_NAME": "NEW_NAME"})
	if err != nil {
		t.Fatalf("newRegistry: %v", err)
	}
	tests := []struct {
		name          string
		in            string
		wantParse     Code
		wantKnown     bool
		wantCanonical Code
	}{
		{"canonical", "NEW_NAME", "NEW_NAME", true, "NEW_NAME"},
		{"alias decodes to canonical", "OLD_NAME", "NEW_NAME", true, "NEW_NAME"},
		{"second alias", "OLDER_NAME", "NEW_NAME", true, "NEW_NAME"},
		{"reserved read as itself, written as parent", "NEW_NAME_DETAIL", "NEW_NAME_DETAIL", true, "NEW_NAME"},
		{"other namespace", "OTHER", "OTHER", true, "OTHER"},
		{"unknown kept", "NEWER_STILL", "NEWER_STILL", false, "NEWER_STILL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, known := r.parse(tt.in)
			if c != tt.wantParse || known != tt.wantKnown {
				t.Errorf("parse(%q) = %q, %v; want %q, %v", tt.in, c, known, tt.wantParse, tt.wantKnown)
			}
			if got := r.canonical(Code(tt.in)); got != tt.wantCanonical {
				t.Errorf("canonical(%q) = %q, want %q", tt.in, got, tt.wantCanonical)
			}
		})
	}
	if diff := cmp.Diff([]Code{"NEW_NAME", "NEW_NAME_DETAIL", "OTHER"}, r.order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if _, isEntry := r.entries["OLD_NAME"]; isEntry {
		t.Errorf("an alias became an entry")
	}
}

func TestNewRegistryRejects(t *testing.T) {
	a := testEntry(Surface, "A", "")
	tests := []struct {
		name    string
		entries []Entry
		aliases map[string]Code
		wantErr string
	}{
		{
			name:    "empty code",
			entries: []Entry{a, testEntry(Action, "", "")},
			wantErr: "errors: empty code in namespace action",
		},
		{
			name:    "duplicate code across namespaces",
			entries: []Entry{a, testEntry(Action, "A", "")},
			wantErr: "errors: code A in namespaces surface and action",
		},
		{
			name:    "duplicate code in one namespace",
			entries: []Entry{a, a},
			wantErr: "errors: code A in namespaces surface and surface",
		},
		{
			name:    "alias shadows a code",
			entries: []Entry{a, testEntry(Surface, "B", "")},
			aliases: map[string]Code{"B": "A"},
			wantErr: "errors: alias B shadows a code",
		},
		{
			name:    "alias shadows a reserved code",
			entries: []Entry{a, testEntry(Surface, "A_DETAIL", "A")},
			aliases: map[string]Code{"A_DETAIL": "A"},
			wantErr: "errors: alias A_DETAIL shadows a code",
		},
		{
			name:    "alias to unknown code",
			entries: []Entry{a},
			aliases: map[string]Code{"OLD": "MISSING"},
			wantErr: "errors: alias OLD must point at a canonical code, not MISSING",
		},
		{
			name:    "alias to reserved code",
			entries: []Entry{a, testEntry(Surface, "A_DETAIL", "A")},
			aliases: map[string]Code{"OLD": "A_DETAIL"},
			wantErr: "errors: alias OLD must point at a canonical code, not A_DETAIL",
		},
		{
			name:    "alias to another alias",
			entries: []Entry{a},
			aliases: map[string]Code{"OLD": "A", "OLDER": "OLD"},
			wantErr: "errors: alias OLDER must point at a canonical code, not OLD",
		},
		{
			name:    "reserved with unknown parent",
			entries: []Entry{a, testEntry(Surface, "A_DETAIL", "MISSING")},
			wantErr: "errors: reserved A_DETAIL has unknown parent MISSING",
		},
		{
			name:    "reserved with reserved parent",
			entries: []Entry{a, testEntry(Surface, "A_DETAIL", "A"), testEntry(Surface, "A_FINER", "A_DETAIL")},
			wantErr: "errors: reserved A_FINER has reserved parent A_DETAIL",
		},
		{
			name:    "reserved with parent in another namespace",
			entries: []Entry{a, testEntry(Action, "A_DETAIL", "A")},
			wantErr: "errors: reserved A_DETAIL and parent A in different namespaces",
		},
		{
			name:    "reserved as its own parent",
			entries: []Entry{a, testEntry(Surface, "LOOP", "LOOP")},
			wantErr: "errors: reserved LOOP has reserved parent LOOP",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := newRegistry(tt.entries, tt.aliases)
			if err == nil {
				t.Fatalf("%s: newRegistry accepted it", tt.name)
			}
			if r != nil {
				t.Errorf("%s: newRegistry returned a registry with the error", tt.name)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("%s: error %q, want %q", tt.name, err, tt.wantErr)
			}
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: mustRegistry did not panic", tt.name)
					}
				}()
				mustRegistry(tt.entries, tt.aliases)
			}()
		})
	}
}

func TestPackageReservedCodes(t *testing.T) {
	tests := []struct {
		reserved, parent Code
		ns               Namespace
	}{
		{DelegationAudienceMismatch, DelegationBindingMismatch, Delegation},
		{ContinuityStorageTimeout, ContinuityStorageUnavailable, Continuity},
	}
	for _, tt := range tests {
		t.Run(string(tt.reserved), func(t *testing.T) {
			if got := Canonical(tt.reserved); got != tt.parent {
				t.Errorf("Canonical(%s) = %s, want %s", tt.reserved, got, tt.parent)
			}
			e, ok := Lookup(tt.reserved)
			if !ok || !e.Reserved() || e.Parent != tt.parent || e.Namespace != tt.ns {
				t.Errorf("Lookup(%s) = %+v, %v; want reserved in %v with parent %s", tt.reserved, e, ok, tt.ns, tt.parent)
			}
			if !tt.reserved.Known() {
				t.Errorf("%s.Known() = false; a reserved code is documented", tt.reserved)
			}
			if !slices.Contains(Codes(tt.ns), tt.reserved) {
				t.Errorf("Codes(%v) leaves out reserved %s", tt.ns, tt.reserved)
			}
			// New never produces a reserved code: it writes the parent,
			// with the parent's default message.
			err := New(tt.reserved, "", nil)
			parent, _ := Lookup(tt.parent)
			if err.Code() != tt.parent || err.Message() != parent.Message.En {
				t.Errorf("New(%s) = %s %q; want %s %q", tt.reserved, err.Code(), err.Message(), tt.parent, parent.Message.En)
			}
			// MarshalText writes what is produced: the parent. An older
			// reader knows the parent; the reserved code has not shipped.
			b, _ := tt.reserved.MarshalText()
			if string(b) != string(tt.parent) {
				t.Errorf("%s.MarshalText() = %s, want %s", tt.reserved, b, tt.parent)
			}
			// Reading stays lenient: a peer that has shipped the code is
			// understood as that code.
			if c, known := ParseCode(string(tt.reserved)); c != tt.reserved || !known {
				t.Errorf("ParseCode(%s) = %s, %v", tt.reserved, c, known)
			}
		})
	}
}

func TestPackageAliases(t *testing.T) {
	// No code has been renamed yet (RATIONALE.md); every alias that is
	// added must resolve to a canonical code.
	aliases := Aliases()
	for alias, c := range aliases {
		t.Run(alias, func(t *testing.T) {
			if got, known := ParseCode(alias); got != c || !known {
				t.Errorf("ParseCode(%s) = %s, %v; want %s", alias, got, known, c)
			}
			if b, _ := Code(alias).MarshalText(); string(b) != string(c) {
				t.Errorf("MarshalText(%s) = %s; an alias is never written", alias, b)
			}
		})
	}
	aliases["MUTATED"] = RateLimited
	if _, ok := Aliases()["MUTATED"]; ok {
		t.Errorf("Aliases() returned the registry's own map")
	}
	if _, known := ParseCode("MUTATED"); known {
		t.Errorf("mutating Aliases() added an alias")
	}
}

func TestHTTPStatus(t *testing.T) {
	tests := []struct {
		name   string
		ns     Namespace
		status func(Code) int
		want   map[Code]int
	}{
		{"surface", Surface, SurfaceHTTPStatus, map[Code]int{
			"INVALID_REQUEST":              400,
			"PROTOCOL_VERSION_UNSUPPORTED": 400,
			"METHOD_NOT_SUPPORTED":         400,
			"CAPABILITY_NOT_EXPOSED":       403,
			"SESSION_REQUIRED":             401,
			"SESSION_INVALID":              401,
			"SESSION_EXPIRED":              401,
			"SESSION_REVOKED":              401,
			"RATE_LIMITED":                 429,
			"RATE_LIMIT_UNAVAILABLE":       503,
			"REPLAY_DETECTED":              409,
			"REPLAY_GUARD_UNAVAILABLE":     503,
			"INTERNAL_ERROR":               500,
		}},
		{"delegation", Delegation, DelegationHTTPStatus, map[Code]int{
			"DELEGATION_REQUEST_INVALID":    400,
			"DELEGATION_CREDENTIAL_INVALID": 401,
			"DELEGATION_BINDING_MISMATCH":   403,
			"DELEGATION_AUDIENCE_MISMATCH":  403,
			"DELEGATION_NOT_FOUND":          404,
			"DELEGATION_REVOKED":            410,
			"DELEGATION_EXPIRED":            410,
			"DELEGATION_INTERNAL":           500,
		}},
		{"continuity", Continuity, ContinuityHTTPStatus, map[Code]int{
			"CONTINUITY_TASK_EXISTS":         409,
			"CONTINUITY_TASK_NOT_FOUND":      404,
			"CONTINUITY_REVISION_CONFLICT":   409,
			"CONTINUITY_LEASE_HELD":          423,
			"CONTINUITY_LEASE_EXPIRED":       409,
			"CONTINUITY_LEASE_REVOKED":       409,
			"CONTINUITY_OWNER_MISMATCH":      403,
			"CONTINUITY_UNAUTHORIZED":        401,
			"CONTINUITY_STORAGE_UNAVAILABLE": 503,
			"CONTINUITY_STORAGE_TIMEOUT":     504,
			"CONTINUITY_INVALID_STATE":       409,
		}},
		{"gateway", Gateway, GatewayHTTPStatus, map[Code]int{
			"INVALID_JSON":          400,
			"MODEL_REQUIRED":        400,
			"MODEL_NOT_ALLOWED":     403,
			"UNAUTHORIZED":          401,
			"PAYLOAD_TOO_LARGE":     413,
			"UPSTREAM_TIMEOUT":      504,
			"UPSTREAM_RATE_LIMITED": 429,
			"GATEWAY_MISCONFIGURED": 500,
			"GATEWAY_RATE_LIMITED":  429,
			"UPSTREAM_UNAVAILABLE":  502,
		}},
	}
	for _, tt := range tests {
		// The literal table covers the namespace exactly, so a new code
		// cannot ship without a status written here.
		t.Run(tt.name+"/covers namespace", func(t *testing.T) {
			want := slices.Sorted(func(yield func(Code) bool) {
				for c := range tt.want {
					if !yield(c) {
						return
					}
				}
			})
			got := slices.Sorted(slices.Values(Codes(tt.ns)))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: status table vs registry (-table +registry):\n%s", tt.name, diff)
			}
		})
		for c, want := range tt.want {
			t.Run(tt.name+"/"+string(c), func(t *testing.T) {
				if got := tt.status(c); got != want {
					t.Errorf("%s(%s) = %d, want %d", tt.name, c, got, want)
				}
				if e, _ := Lookup(c); e.HTTPStatus != want {
					t.Errorf("Lookup(%s).HTTPStatus = %d, want %d", c, e.HTTPStatus, want)
				}
			})
		}
		// Unknown codes and codes of every other namespace map to 0.
		t.Run(tt.name+"/foreign and unknown", func(t *testing.T) {
			foreign := []Code{"", "NOT_A_CODE", "rate_limited"}
			for _, ns := range Namespaces() {
				if ns != tt.ns {
					foreign = append(foreign, Codes(ns)...)
				}
			}
			for _, c := range foreign {
				if got := tt.status(c); got != 0 {
					t.Errorf("%s(%q) = %d, want 0", tt.name, c, got)
				}
			}
		})
	}
	t.Run("action codes have no status", func(t *testing.T) {
		for _, c := range Codes(Action) {
			if e, _ := Lookup(c); e.HTTPStatus != 0 {
				t.Errorf("Lookup(%s).HTTPStatus = %d, want 0", c, e.HTTPStatus)
			}
		}
	})
}

func TestSurfaceExecuted(t *testing.T) {
	tests := []struct {
		code Code
		want Executed
	}{
		{"INVALID_REQUEST", ExecutedNo},
		{"PROTOCOL_VERSION_UNSUPPORTED", ExecutedNo},
		{"METHOD_NOT_SUPPORTED", ExecutedNo},
		{"CAPABILITY_NOT_EXPOSED", ExecutedNo},
		{"SESSION_REQUIRED", ExecutedNo},
		{"SESSION_INVALID", ExecutedNo},
		{"SESSION_EXPIRED", ExecutedNo},
		{"SESSION_REVOKED", ExecutedNo},
		{"RATE_LIMITED", ExecutedNo},
		{"RATE_LIMIT_UNAVAILABLE", ExecutedNo},
		{"REPLAY_DETECTED", ExecutedNo},
		{"REPLAY_GUARD_UNAVAILABLE", ExecutedNo},
		{"INTERNAL_ERROR", ExecutedUnconfirmed},
		{"EXECUTION_FAILED", ExecutedNotApplicable},
		{"GATEWAY_MISCONFIGURED", ExecutedNotApplicable},
		{"NOT_A_CODE", ExecutedNotApplicable},
	}
	for _, tt := range tests {
		t.Run(string(tt.code), func(t *testing.T) {
			if got := SurfaceExecuted(tt.code); got != tt.want {
				t.Errorf("SurfaceExecuted(%s) = %q, want %q", tt.code, got, tt.want)
			}
		})
	}
}

func TestTextIn(t *testing.T) {
	text := Text{En: "The session has expired", Zh: "会话已过有效期"}
	tests := []struct {
		lang string
		want string
	}{
		{"zh", text.Zh},
		{"zh-CN", text.Zh},
		{"zh-Hans-CN", text.Zh},
		{"zh_TW", text.Zh},
		{"ZH", text.Zh},
		{"Zh-hk", text.Zh},
		{"en", text.En},
		{"en-US", text.En},
		{"", text.En},
		{"fr", text.En},
		{"z", text.En},
		{"zhx", text.En},
		{"zh.", text.En},
		{" zh", text.En},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.lang), func(t *testing.T) {
			if got := text.In(tt.lang); got != tt.want {
				t.Errorf("In(%q) = %q, want %q", tt.lang, got, tt.want)
			}
		})
	}
	t.Run("no Chinese falls back to English", func(t *testing.T) {
		if got := (Text{En: "only English"}).In("zh-CN"); got != "only English" {
			t.Errorf("In(zh-CN) = %q, want the English text", got)
		}
	})
}
