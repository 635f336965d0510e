package errors

import (
	"encoding/json"
	stderrors "errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// The sensitive keys of the brief and docs/protocol.md §5.6 ("common credential and
// header values are redacted"), spelled as they appear in the wild.
var sensitiveKeys = []string{
	"authorization", "Authorization", "proxy-authorization", "Proxy-Authorization",
	"cookie", "Cookie", "set-cookie", "Set-Cookie",
	"X-Api-Key", "x-api-key", "api_key", "apiKey", "API KEY",
	"access_token", "refreshToken", "id_token", "token",
	"password", "Password", "passwd", "passphrase",
	"client_secret", "clientSecret", "secret",
	"session", "sessionId", "session_token",
	"private_key", "signature", "credentials", "x-csrf-token", "X-XSRF-TOKEN",
	"auth", "pin", "otp", "CVV",
}

func TestRedactSensitiveKeys(t *testing.T) {
	// Each key is redacted wherever it is: at the top, in a nested object,
	// in an object inside an array, and deep in a mix of both.
	depths := []struct {
		name string
		in   func(k string, v any) map[string]any
	}{
		{"top", func(k string, v any) map[string]any {
			return map[string]any{k: v, "keep": "ok"}
		}},
		{"nested", func(k string, v any) map[string]any {
			return map[string]any{"request": map[string]any{k: v, "keep": "ok"}}
		}},
		{"array", func(k string, v any) map[string]any {
			return map[string]any{"list": []any{map[string]any{k: v, "keep": "ok"}, "ok"}}
		}},
		{"deep", func(k string, v any) map[string]any {
			return map[string]any{"a": map[string]any{"b": []any{[]any{map[string]any{"c": map[string]any{k: v, "keep": "ok"}}}}}}
		}},
	}
	values := []struct {
		name string
		v    any
	}{
		{"string", "opaque-value-1"},
		{"number", 123456},
		{"object", map[string]any{"id": "opaque", "n": 1}},
		{"array", []any{"opaque-a", "opaque-b"}},
	}
	for _, k := range sensitiveKeys {
		for _, d := range depths {
			for _, v := range values {
				t.Run(k+"/"+d.name+"/"+v.name, func(t *testing.T) {
					got := Redact(d.in(k, v.v))
					want := d.in(k, Redacted)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("Redact with key %q (%s, %s) (-want +got):\n%s", k, d.name, v.name, diff)
					}
				})
			}
		}
	}
}

func TestRedact(t *testing.T) {
	type login struct {
		User     string   `json:"user"`
		Password string   `json:"password"`
		Tags     []string `json:"tags"`
		Attempts int      `json:"attempts"`
	}
	type untagged struct {
		Name  string
		Token string
		note  string // unexported: never encoded
	}
	tests := []struct {
		name string
		in   map[string]any
		want map[string]any
	}{
		{
			name: "header-like objects in a list",
			in: map[string]any{"headers": []any{
				map[string]any{"name": "Authorization", "value": "opaque-1"},
				map[string]any{"name": "Accept", "value": "text/html"},
				map[string]any{"name": "proxy-authorization", "value": "opaque-2"},
			}},
			want: map[string]any{"headers": []any{
				map[string]any{"name": "Authorization", "value": Redacted},
				map[string]any{"name": "Accept", "value": "text/html"},
				map[string]any{"name": "proxy-authorization", "value": Redacted},
			}},
		},
		{
			name: "header-like object named by key",
			in:   map[string]any{"h": map[string]any{"key": "X-Api-Key", "value": "opaque"}},
			want: map[string]any{"h": map[string]any{"key": "X-Api-Key", "value": Redacted}},
		},
		{
			name: "header-like object with values",
			in:   map[string]any{"h": map[string]any{"header": "Set-Cookie", "values": []any{"a=1", "b=2"}}},
			want: map[string]any{"h": map[string]any{"header": "Set-Cookie", "values": Redacted}},
		},
		{
			name: "header-like object with object value",
			in:   map[string]any{"h": map[string]any{"name": "cookie", "value": map[string]any{"sid": "x"}}},
			want: map[string]any{"h": map[string]any{"name": "cookie", "value": Redacted}},
		},
		{
			name: "header-like object at the top",
			in:   map[string]any{"name": "Authorization", "value": "opaque"},
			want: map[string]any{"name": "Authorization", "value": Redacted},
		},
		{
			name: "innocent header kept",
			in:   map[string]any{"h": map[string]any{"name": "Content-Type", "value": "application/json"}},
			want: map[string]any{"h": map[string]any{"name": "Content-Type", "value": "application/json"}},
		},
		{
			name: "name that is not a string",
			in:   map[string]any{"h": map[string]any{"name": 5, "value": "v"}},
			want: map[string]any{"h": map[string]any{"name": json.Number("5"), "value": "v"}},
		},
		{
			name: "bearer credential under an innocent key",
			in:   map[string]any{"note": "Bearer abcdefghijklmnop"},
			want: map[string]any{"note": Redacted},
		},
		{
			name: "lower-case bearer inside text",
			in:   map[string]any{"log": "sent bearer abc.def-ghi_jkl to upstream"},
			want: map[string]any{"log": "sent " + Redacted + " to upstream"},
		},
		{
			name: "basic credential in a header line",
			in:   map[string]any{"line": "Authorization: Basic dXNlcjpwYXNzd29yZA=="},
			want: map[string]any{"line": "Authorization: " + Redacted},
		},
		{
			name: "JWT",
			in:   map[string]any{"id": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl-x_y"},
			want: map[string]any{"id": Redacted},
		},
		{
			name: "Pling token",
			in:   map[string]any{"id": "pl1.k1.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlc2lnbmF0dXJl-x_y"},
			want: map[string]any{"id": Redacted},
		},
		{
			name: "Pling token in text, and one without its signature",
			in:   map[string]any{"log": "sent pl1.key-2026_a.eyJzdWIiOiJhbGljZSJ9.c2ln to upstream; then pl1.k1.eyJzdWIiOiJib2IifQ."},
			want: map[string]any{"log": "sent " + Redacted + " to upstream; then " + Redacted},
		},
		{
			name: "capability ids that start with pl1 are kept",
			in:   map[string]any{"capability": "pl1.cart.add", "other": "pl1.x"},
			want: map[string]any{"capability": "pl1.cart.add", "other": "pl1.x"},
		},
		{
			name: "API keys in text",
			in:   map[string]any{"error": "key sk-proj-abcdefghijklmnop rejected; try pk_live_abcdefghijklmnop"},
			want: map[string]any{"error": "key " + Redacted + " rejected; try " + Redacted},
		},
		{
			name: "GitHub and AWS keys",
			in:   map[string]any{"a": "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "b": "AKIAIOSFODNN7EXAMPLE"},
			want: map[string]any{"a": Redacted, "b": Redacted},
		},
		{
			name: "credentials in an array",
			in:   map[string]any{"args": []any{"--key", "sk-abcdefghijklmnopq", "--verbose"}},
			want: map[string]any{"args": []any{"--key", Redacted, "--verbose"}},
		},
		{
			name: "innocent keys and values kept",
			in: map[string]any{
				"count": 3, "name": "Alice", "author": "Bob", "keyboard": "qwerty",
				"status": "ok", "flag": true, "none": nil, "ratio": 0.5,
				"list": []any{1, "two"}, "message": "Bearer of bad news",
				"short": "Bearer abc", "sky": "sk-short", "url": "https://example.com/orders/42",
				"record": map[string]any{"id": "r1", "total": 12.5},
			},
			want: map[string]any{
				"count": json.Number("3"), "name": "Alice", "author": "Bob", "keyboard": "qwerty",
				"status": "ok", "flag": true, "none": nil, "ratio": json.Number("0.5"),
				"list": []any{json.Number("1"), "two"}, "message": "Bearer of bad news",
				"short": "Bearer abc", "sky": "sk-short", "url": "https://example.com/orders/42",
				"record": map[string]any{"id": "r1", "total": json.Number("12.5")},
			},
		},
		{
			name: "structs normalized through JSON",
			in: map[string]any{
				"login":    login{User: "bob", Password: "hunter2", Tags: []string{"a"}, Attempts: 2},
				"ptr":      &login{User: "amy"},
				"untagged": untagged{Name: "n", Token: "t", note: "hidden"},
				"nilPtr":   (*login)(nil),
			},
			want: map[string]any{
				"login":    map[string]any{"user": "bob", "password": Redacted, "tags": []any{"a"}, "attempts": json.Number("2")},
				"ptr":      map[string]any{"user": "amy", "password": Redacted, "tags": nil, "attempts": json.Number("0")},
				"untagged": map[string]any{"Name": "n", "Token": Redacted},
				"nilPtr":   nil,
			},
		},
		{
			name: "other Go values normalized through JSON",
			in: map[string]any{
				"int":     42,
				"uint8":   uint8(7),
				"float32": float32(1.5),
				"float64": 2.25,
				"time":    time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
				"bytes":   []byte("hi"),
				"ints":    []int{1, 2},
				"intMap":  map[string]int{"a": 1},
				"raw":     json.RawMessage(`{"token":"x","a":[1]}`),
				"number":  json.Number("12.50"),
				"err":     stderrors.New("boom"),
				"dur":     time.Second,
			},
			want: map[string]any{
				"int":     json.Number("42"),
				"uint8":   json.Number("7"),
				"float32": json.Number("1.5"),
				"float64": json.Number("2.25"),
				"time":    "2024-01-02T03:04:05Z",
				"bytes":   "aGk=",
				"ints":    []any{json.Number("1"), json.Number("2")},
				"intMap":  map[string]any{"a": json.Number("1")},
				"raw":     map[string]any{"token": Redacted, "a": []any{json.Number("1")}},
				"number":  json.Number("12.50"),
				"err":     map[string]any{},
				"dur":     json.Number("1000000000"),
			},
		},
		{
			name: "a marshaler that writes a credential",
			in:   map[string]any{"v": leakyMarshaler{}},
			want: map[string]any{"v": Redacted},
		},
		{
			name: "unencodable values",
			in: map[string]any{
				"chan":       make(chan int),
				"func":       func() {},
				"complex":    complex(1, 2),
				"nan":        math.NaN(),
				"inf":        math.Inf(-1),
				"badNumber":  json.Number("12abc"),
				"mapOfChan":  map[string]any{"c": make(chan int), "k": "v"},
				"sliceFunc":  []any{1, func() {}},
				"failing":    failingMarshaler{},
				"innocent":   "kept",
				"authorized": true,
			},
			want: map[string]any{
				"chan":       "[unencodable]",
				"func":       "[unencodable]",
				"complex":    "[unencodable]",
				"nan":        "[unencodable]",
				"inf":        "[unencodable]",
				"badNumber":  "[unencodable]",
				"mapOfChan":  "[unencodable]",
				"sliceFunc":  "[unencodable]",
				"failing":    "[unencodable]",
				"innocent":   "kept",
				"authorized": true,
			},
		},
		{
			name: "unencodable under a sensitive key is simply redacted",
			in:   map[string]any{"token": func() {}},
			want: map[string]any{"token": Redacted},
		},
		{
			name: "empty map",
			in:   map[string]any{},
			want: map[string]any{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s: Redact (-want +got):\n%s", tt.name, diff)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("%s: the result does not encode: %v", tt.name, err)
			}
		})
	}
	t.Run("nil", func(t *testing.T) {
		if got := Redact(nil); got != nil {
			t.Errorf("Redact(nil) = %#v, want nil", got)
		}
	})
}

type leakyMarshaler struct{}

func (leakyMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"Bearer abcdefghijklmnop"`), nil }

type failingMarshaler struct{}

func (failingMarshaler) MarshalJSON() ([]byte, error) { return nil, fmt.Errorf("cannot") }

// redactInput is built fresh for each use, so a test can compare an input
// after Redact with one that Redact never saw. With big, the details exceed
// the cap.
func redactInput(big bool) map[string]any {
	d := map[string]any{
		"authorization": "Bearer abcdefghijklmnop",
		"note":          "key sk-abcdefghijklmnopq",
		"headers": []any{
			map[string]any{"name": "Cookie", "value": "sid=1"},
			map[string]any{"name": "Accept", "value": "*/*"},
		},
		"nested": map[string]any{"password": "p", "list": []any{"a", map[string]any{"token": "t"}}},
		"count":  3,
	}
	if big {
		d["zz"] = map[string]any{"body": strings.Repeat("z", 900)}
	}
	return d
}

func TestRedactDoesNotMutateInput(t *testing.T) {
	for _, big := range []bool{false, true} {
		t.Run(fmt.Sprintf("big=%v", big), func(t *testing.T) {
			in := redactInput(big)
			out := Redact(in)
			if diff := cmp.Diff(redactInput(big), in); diff != "" {
				t.Errorf("Redact mutated its input (-before +after):\n%s", diff)
			}
			// Nor does the result share anything with the input.
			nested, ok1 := out["nested"].(map[string]any)
			headers, ok2 := out["headers"].([]any)
			if !ok1 || !ok2 {
				t.Fatalf("nested or headers were cut: %v", out)
			}
			nested["password"] = "changed"
			nested["list"].([]any)[1].(map[string]any)["token"] = "changed"
			headers[1].(map[string]any)["value"] = "changed"
			if diff := cmp.Diff(redactInput(big), in); diff != "" {
				t.Errorf("the result shares values with the input (-before +after):\n%s", diff)
			}
		})
	}
}

// capLen is the wire length of details: what json.Marshal, and so
// (*Error).MarshalJSON, writes.
func capLen(t *testing.T, d map[string]any) int {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatalf("details do not encode: %v", err)
	}
	return len(b)
}

func TestRedactCap(t *testing.T) {
	manyKeys := map[string]any{}
	for i := range 100 {
		manyKeys[fmt.Sprintf("k%03d", i)] = fmt.Sprintf("value-%03d-xxxxxxxx", i)
	}
	tests := []struct {
		name string
		in   map[string]any
		// check inspects the capped result beyond the common checks.
		check func(t *testing.T, got map[string]any)
	}{
		{
			name: "many keys keep a sorted prefix",
			in:   manyKeys,
			check: func(t *testing.T, got map[string]any) {
				var kept []string
				for k := range got {
					if k != TruncatedKey {
						kept = append(kept, k)
					}
				}
				slices.Sort(kept)
				if len(kept) < 10 {
					t.Fatalf("only %d keys kept: %v", len(kept), kept)
				}
				for i, k := range kept {
					if want := fmt.Sprintf("k%03d", i); k != want {
						t.Fatalf("kept keys %v are not the sorted prefix (at %d: %s, want %s)", kept, i, k, want)
					}
				}
				for _, k := range kept[:len(kept)-1] {
					if got[k] != manyKeys[k] {
						t.Errorf("whole key %s changed: %v", k, got[k])
					}
				}
			},
		},
		{
			name: "huge string cut with an ellipsis",
			in:   map[string]any{"body": strings.Repeat("x", 5000)},
			check: func(t *testing.T, got map[string]any) {
				// {"body":"…","truncated":true} is 31 bytes: 569 x fit.
				want := map[string]any{"body": strings.Repeat("x", 569) + "…", TruncatedKey: true}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "huge multi-byte string cut on a rune boundary",
			in:   map[string]any{"body": strings.Repeat("汉", 1000)},
			check: func(t *testing.T, got map[string]any) {
				s, _ := got["body"].(string)
				if !utf8.ValidString(s) || !strings.HasSuffix(s, "…") || !strings.HasPrefix(s, "汉汉汉") {
					t.Errorf("body = %q", s)
				}
			},
		},
		{
			name: "characters that json.Marshal escapes",
			in:   map[string]any{"html": strings.Repeat("<&>", 400)},
			check: func(t *testing.T, got map[string]any) {
				if s, _ := got["html"].(string); !strings.HasPrefix(s, "<&>") || !strings.HasSuffix(s, "…") {
					t.Errorf("html = %q", s)
				}
			},
		},
		{
			name: "huge nested value cut to a prefix of its encoding",
			in:   map[string]any{"a": map[string]any{"b": strings.Repeat("y", 2000)}},
			check: func(t *testing.T, got map[string]any) {
				s, _ := got["a"].(string)
				if !strings.HasPrefix(s, `{"b":"yyy`) || !strings.HasSuffix(s, "…") {
					t.Errorf("a = %q", s)
				}
			},
		},
		{
			name: "a caller's truncated key is overwritten",
			in:   map[string]any{TruncatedKey: false, "body": strings.Repeat("x", 1000)},
		},
		{
			name: "huge key dropped",
			in:   map[string]any{strings.Repeat("k", 700): "v"},
			check: func(t *testing.T, got map[string]any) {
				if diff := cmp.Diff(map[string]any{TruncatedKey: true}, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "redacted before it is cut",
			in: map[string]any{
				"a":     strings.Repeat("Bearer abcdefghijklmnop ", 60),
				"token": strings.Repeat("t", 1000),
			},
			check: func(t *testing.T, got map[string]any) {
				b, _ := json.Marshal(got)
				if strings.Contains(string(b), "abcdefghijklmnop") || strings.Contains(string(b), "ttttt") {
					t.Errorf("a credential survived the cut: %s", b)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in)
			if n := capLen(t, got); n > MaxDetailsChars {
				t.Errorf("%s: encoding is %d bytes, cap %d", tt.name, n, MaxDetailsChars)
			}
			if got[TruncatedKey] != true {
				t.Errorf("%s: %q = %v, want true", tt.name, TruncatedKey, got[TruncatedKey])
			}
			if tt.check != nil {
				tt.check(t, got)
			}
			// Cutting is stable: redacting the result changes nothing.
			if diff := cmp.Diff(got, Redact(got)); diff != "" {
				t.Errorf("%s: Redact(Redact(x)) != Redact(x):\n%s", tt.name, diff)
			}
		})
	}
}

func TestRedactCapBoundary(t *testing.T) {
	// {"k":"…"} is len(value)+8 bytes.
	tests := []struct {
		name          string
		n             int
		wantTruncated bool
	}{
		{"599 bytes kept", 591, false},
		{"600 bytes kept", 592, false},
		{"601 bytes cut", 593, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := map[string]any{"k": strings.Repeat("a", tt.n)}
			got := Redact(in)
			if _, cut := got[TruncatedKey]; cut != tt.wantTruncated {
				t.Errorf("%s: truncated %v, want %v", tt.name, cut, tt.wantTruncated)
			}
			if !tt.wantTruncated {
				if diff := cmp.Diff(in, got); diff != "" {
					t.Errorf("%s: details under the cap changed:\n%s", tt.name, diff)
				}
			}
			if n := capLen(t, got); n > MaxDetailsChars {
				t.Errorf("%s: encoding is %d bytes", tt.name, n)
			}
		})
	}
}

func TestRedactDeterministic(t *testing.T) {
	in := map[string]any{}
	for i := range 60 {
		in[fmt.Sprintf("key-%02d", i)] = map[string]any{
			"n": i, "s": strings.Repeat("v", i), "list": []any{i, "x"},
		}
	}
	in["z-big"] = strings.Repeat("w", 3000)
	first := Redact(in)
	firstJSON, _ := json.Marshal(first)
	for i := range 50 {
		got := Redact(in)
		if diff := cmp.Diff(first, got); diff != "" {
			t.Fatalf("run %d differs (-first +run):\n%s", i, diff)
		}
		if b, _ := json.Marshal(got); string(b) != string(firstJSON) {
			t.Fatalf("run %d encodes differently:\n%s\n%s", i, firstJSON, b)
		}
	}
}

func TestRedactString(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"plain", "the order was not saved", "the order was not saved"},
		{"bearer", "Authorization: Bearer abcdefghijklmnop", "Authorization: " + Redacted},
		{"jwt and key", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abc and sk-abcdefghijklmnopq",
			Redacted + " and " + Redacted},
		{"pling token", "token pl1.k1.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl was refused", "token " + Redacted + " was refused"},
		{"at the cap", strings.Repeat("a", 600), strings.Repeat("a", 600)},
		{"over the cap", strings.Repeat("a", 601), strings.Repeat("a", 597) + "…"},
		{"over the cap, multi-byte", strings.Repeat("汉", 300), strings.Repeat("汉", 199) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RedactString(tt.in)
			if got != tt.want {
				t.Errorf("%s: RedactString = %q, want %q", tt.name, got, tt.want)
			}
			if len(got) > MaxDetailsChars || !utf8.ValidString(got) {
				t.Errorf("%s: %d bytes, valid UTF-8 %v", tt.name, len(got), utf8.ValidString(got))
			}
		})
	}
}

// TestSentinelNeverLeaks puts one secret under every sensitive key and in
// every credential shape, and checks it reaches none of the outputs.
func TestSentinelNeverLeaks(t *testing.T) {
	const sentinel = "Zq9SENTINELx7Kp2wM4"
	shapes := []string{
		"Bearer " + sentinel,
		"bearer " + sentinel,
		"Basic " + sentinel,
		"Digest " + sentinel,
		"eyJhbGciOi." + sentinel + "." + sentinel,
		"eyJ" + sentinel + ".eyJ" + sentinel + ".sig",
		"pl1.k1." + sentinel + "." + sentinel,
		"pl1.kid_2." + sentinel,
		"sk-" + sentinel,
		"sk_live_" + sentinel,
		"pk-" + sentinel,
		"rk_" + sentinel,
		"ghp_" + sentinel + "abcdef",
		"header line Authorization: Bearer " + sentinel + " sent",
	}
	d := map[string]any{}
	for i, k := range sensitiveKeys {
		d[k] = sentinel
		d[fmt.Sprintf("nested%02d", i)] = map[string]any{k: sentinel, "list": []any{map[string]any{k: []any{sentinel}}}}
		d[fmt.Sprintf("header%02d", i)] = map[string]any{"name": k, "value": sentinel}
	}
	for i, s := range shapes {
		d[fmt.Sprintf("shape%02d", i)] = s
		d[fmt.Sprintf("shapeList%02d", i)] = []any{"x", s, map[string]any{"innocent": s}}
	}
	d["struct"] = struct {
		Password string `json:"password"`
		Note     string `json:"note"`
	}{sentinel, "Bearer " + sentinel}
	d["headers"] = []any{map[string]any{"key": "Cookie", "values": []any{sentinel}}}

	// Spread over small maps so that a cap cannot hide a leak by cutting.
	var parts []map[string]any
	part := map[string]any{}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range d {
			if !yield(k) {
				return
			}
		}
	}) {
		part[k] = d[k]
		if len(part) == 3 {
			parts = append(parts, part)
			part = map[string]any{}
		}
	}
	parts = append(parts, part, d)

	for i, p := range parts {
		t.Run(fmt.Sprintf("part%02d", i), func(t *testing.T) {
			outputs := map[string]string{}
			b, err := json.Marshal(Redact(p))
			if err != nil {
				t.Fatal(err)
			}
			outputs["Redact"] = string(b)
			e := New(InvalidRequest, "", p)
			outputs["Error()"] = e.Error()
			outputs["fmt %v"] = fmt.Sprintf("%v", e)
			b, _ = e.MarshalJSON()
			outputs["MarshalJSON"] = string(b)
			b, _ = json.Marshal(Wrap(InternalError, "", fmt.Errorf("cause %s", sentinel)).WithDetails(p))
			outputs["Wrap+WithDetails MarshalJSON"] = string(b)
			outputs["Wrap Error()"] = Wrap(InternalError, "", fmt.Errorf("cause %s", sentinel)).Error()
			raw, _ := json.Marshal(map[string]any{"code": "INVALID_REQUEST", "message": "m", "details": p})
			var back Error
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			b, _ = json.Marshal(&back)
			outputs["UnmarshalJSON then MarshalJSON"] = string(b)
			status, body := RenderGateway(e)
			outputs["RenderGateway"] = fmt.Sprint(status, string(body))
			for name, s := range outputs {
				if strings.Contains(s, sentinel) {
					t.Errorf("%s leaks the sentinel: %s", name, s)
				}
			}
		})
	}
}

// FuzzRedact checks on any JSON object that the result encodes, fits the
// cap and is stable under a second Redact.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"authorization":"Bearer abcdefghijklmnop","a":1}`,
		`{"headers":[{"name":"Cookie","value":"x"}]}`,
		`{"name":"Authorization","value":"x"}`,
		`{"body":"` + strings.Repeat("x", 700) + `"}`,
		`{"html":"` + strings.Repeat("<>&", 300) + `"}`,
		`{"a":{"b":[1,2,{"c":"` + strings.Repeat("汉", 300) + `"}]},"truncated":false}`,
		`{"n":1e400}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var in map[string]any
		if d.Decode(&in) != nil || in == nil {
			return
		}
		got := Redact(in)
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("Redact(%s) does not encode: %v", s, err)
		}
		if len(b) > MaxDetailsChars {
			t.Fatalf("Redact(%s) encodes to %d bytes: %s", s, len(b), b)
		}
		if diff := cmp.Diff(got, Redact(got)); diff != "" {
			t.Fatalf("Redact is not stable on %s:\n%s", s, diff)
		}
	})
}

// TestRedactValue: one value under its key, redacted as Redact would
// keep it, with no cap (an approval challenge bounds it by its own rules).
func TestRedactValue(t *testing.T) {
	long := strings.Repeat("a", 2*MaxDetailsChars)
	tests := []struct {
		name string
		key  string
		v    any
		want any
	}{
		{"a credential key", "password", "hunter2", Redacted},
		{"a plain value", "to", "alice", "alice"},
		{"a credential in text", "note", "use Bearer abcdefghijklmnop", "use " + Redacted},
		{"a credential key inside", "meta", map[string]any{"apiKey": "k", "ok": 1}, map[string]any{"apiKey": Redacted, "ok": json.Number("1")}},
		{"no cap", "note", long, long},
		{"an unencodable value", "x", math.NaN(), "[unencodable]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, RedactValue(tt.key, tt.v)); diff != "" {
				t.Errorf("RedactValue(%q, …) (-want +got):\n%s", tt.key, diff)
			}
		})
	}
}
