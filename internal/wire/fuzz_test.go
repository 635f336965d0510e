package wire_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/schema"
)

// FuzzDecode checks the properties every request text must keep through
// DecodeRequest (docs/protocol.md §3.3): no panic; exactly one of request and
// rejection; an accepted request is well formed and survives re-encoding; a
// rejection is a Surface code at steps 1–5 whose response encodes to a valid
// ok:false envelope; and the result is deterministic. The corpus is seeded
// from the table of TestDecodeRequest; crashers found here are kept under
// testdata/fuzz/FuzzDecode and as named cases in that table.
func FuzzDecode(f *testing.F) {
	for _, tc := range decodeCases {
		f.Add([]byte(tc.raw))
	}
	for _, s := range []string{
		`{"protocol":"pling.surface/0.1","id":"req_01","method":"describe","session":"s","options":{"maxRecords":50},"critical":["options"]}`,
		`{"protocol":"pling.surface/0.1","id":"req_02","method":"invoke","session":"tok","capability":"approve@order","input":{"record":"ord_17","note":"checked"}}`,
		`{"protocol":"pling.surface/0.1","id":"a:b.c-d_e","method":"invoke","capability":"cart.add","input":{"sku":"A-1","qty":2,"gift":false,"tags":["x","y"],"meta":{"n":null,"f":-0.5e+3}},"resume":"rs_9","critical":["resume"]}`,
		`{"protocol":"pling.surface/0.1","id":"r","method":"invoke","capability":"c","input":{"s":"\u00e9\ud83d\ude00\n\t\"\\\/"}}`,
	} {
		f.Add([]byte(s))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		orig := bytes.Clone(data)
		req, rej := wire.DecodeRequest(data)
		if !bytes.Equal(orig, data) {
			t.Fatal("DecodeRequest modified its input")
		}
		if (req == nil) == (rej == nil) {
			t.Fatalf("got request %v and rejection %v; want exactly one", req, rej)
		}

		req2, rej2 := wire.DecodeRequest(data)
		if diff := cmp.Diff(req, req2); diff != "" {
			t.Fatalf("decoding twice gave different requests (-first +second):\n%s", diff)
		}
		if diff := cmp.Diff(rej, rej2); diff != "" {
			t.Fatalf("decoding twice gave different rejections (-first +second):\n%s", diff)
		}

		// Only JSON text gets past step 1, and text rejected as
		// malformed is not JSON.
		valid := json.Valid(data)
		if !valid && (rej == nil || rej.Step != 1) {
			t.Fatalf("invalid JSON got past step 1: request %v, rejection %v", req, rej)
		}
		if rej != nil && rej.Step == 1 && valid {
			if r := rej.Details["reason"]; r == "malformed_json" || r == "trailing_data" {
				t.Fatalf("valid JSON rejected as %v", r)
			}
		}

		if rej != nil {
			checkFuzzRejection(t, rej)
			return
		}
		checkFuzzRequest(t, req)

		// Re-encoding the request and decoding it again gives the same
		// request.
		text, err := schema.Encode(requestJSON(req))
		if err != nil {
			t.Fatalf("Encode(request fields): %v", err)
		}
		if len(text) > schema.MaxRequestBytes {
			return // escaping can grow text that was at the limit
		}
		again, rej3 := wire.DecodeRequest(text)
		if rej3 != nil {
			t.Fatalf("re-encoded request %s rejected at step %d: %s %s", text, rej3.Step, rej3.Code, rej3.Message)
		}
		if diff := cmp.Diff(req, again); diff != "" {
			t.Fatalf("re-encoded request %s decodes differently (-first +again):\n%s", text, diff)
		}
	})
}

func checkFuzzRequest(t *testing.T, req *wire.Request) {
	t.Helper()
	if req.Protocol != schema.Protocol {
		t.Fatalf("accepted protocol %q", req.Protocol)
	}
	if !wire.ValidID(req.ID) {
		t.Fatalf("accepted id %q", req.ID)
	}
	switch req.Method {
	case schema.MethodInvoke:
		if req.Input == nil {
			t.Fatal("accepted invoke with nil Input")
		}
		if req.Capability == "" || len(req.Capability) > schema.MaxCapabilityLen {
			t.Fatalf("accepted capability of %d bytes", len(req.Capability))
		}
		if req.HasResume && (req.Resume == "" || len(req.Resume) > schema.MaxResumeLen) {
			t.Fatalf("accepted resume of %d bytes", len(req.Resume))
		}
		if req.Options.MaxRecords != nil {
			t.Fatal("invoke carries describe options")
		}
	case schema.MethodDescribe:
		if req.Input != nil || req.Capability != "" || req.HasResume {
			t.Fatalf("describe carries invoke fields: %+v", req)
		}
		if n := req.Options.MaxRecords; n != nil && (*n < 0 || *n > 10000) {
			t.Fatalf("accepted maxRecords %d", *n)
		}
	default:
		t.Fatalf("accepted method %q", req.Method)
	}
	if len(req.Session) > schema.MaxSessionLen || (!req.HasSession && req.Session != "") {
		t.Fatalf("accepted session of %d bytes (present %v)", len(req.Session), req.HasSession)
	}
	if len(req.Critical) > schema.MaxCritical {
		t.Fatalf("accepted %d critical names", len(req.Critical))
	}
}

func checkFuzzRejection(t *testing.T, rej *wire.Rejection) {
	t.Helper()
	if rej.Step < 1 || rej.Step > 5 {
		t.Fatalf("rejection at step %d", rej.Step)
	}
	if ns, ok := rej.Code.Namespace(); !ok || ns != perr.Surface {
		t.Fatalf("rejection code %q is not a Surface code (namespace %v, known %v)", rej.Code, ns, ok)
	}
	if rej.ID != nil && !wire.ValidID(*rej.ID) {
		t.Fatalf("rejection echoes malformed id %q", *rej.ID)
	}
	if (rej.Step == 1 || rej.Step == 3) && rej.ID != nil {
		t.Fatalf("step %d rejection echoes id %q; want null", rej.Step, *rej.ID)
	}
	b, err := schema.Encode(rej.Response())
	if err != nil {
		t.Fatalf("Encode(response): %v", err)
	}
	if !json.Valid(b) {
		t.Fatalf("response is not valid JSON: %q", b)
	}
	var resp map[string]any
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatalf("response %s is not an object: %v", b, err)
	}
	if resp["protocol"] != schema.Protocol || resp["ok"] != false {
		t.Fatalf("response envelope is wrong: %s", b)
	}
	id, present := resp["id"]
	if !present || (rej.ID == nil && id != nil) || (rej.ID != nil && id != *rej.ID) {
		t.Fatalf("response id does not match the rejection's: %s", b)
	}
	e, _ := resp["error"].(map[string]any)
	if code, ok := e["code"].(string); !ok || code != string(rej.Code) {
		t.Fatalf("response error.code is not %q: %s", rej.Code, b)
	}
}

// requestJSON is the JSON object of an accepted request's fields.
func requestJSON(req *wire.Request) map[string]any {
	m := map[string]any{"protocol": req.Protocol, "id": req.ID, "method": string(req.Method)}
	if req.HasSession {
		m["session"] = req.Session
	}
	if req.Method == schema.MethodInvoke {
		m["capability"] = req.Capability
		m["input"] = req.Input
		if req.HasResume {
			m["resume"] = req.Resume
		}
	}
	if req.Options.MaxRecords != nil {
		m["options"] = map[string]any{"maxRecords": *req.Options.MaxRecords}
	}
	if req.Critical != nil {
		m["critical"] = req.Critical
	}
	return m
}
