package main

import (
	"encoding/json"
	"testing"
)

func TestInvokeCommand(t *testing.T) {
	shop, sess := fixtureTargets(t)
	runCmdCases(t, []cmdCase{
		{name: "readable", args: []string{"invoke", shop, "cart.add", "--input", `{"sku":"A1"}`}, wantOut: []string{
			"ok: cart.add (request agent-", "value: {", `"added": true`, "evidence: cart.add ran",
			"expected cart.count to increase: 0 → 1, met", "changed: cart.count 0 → 1"}},
		{name: "flags first", args: []string{"invoke", "--input", `{"sku":"A1"}`, shop, "cart.add"}, wantOut: []string{"ok: cart.add"}},
		{name: "--record", args: []string{"invoke", shop, "approve@order", "--record", "ord_1"}, wantOut: []string{"ok: approve@order", `"approved": true`}},
		{name: "business failure", args: []string{"invoke", shop, "cart.clear"}, wantExit: 1, wantErrOut: []string{
			"EXECUTION_FAILED", "the cart is locked", "next: Observe the page", "observed states: {\"cart.count\":0}"}},
		{name: "no such record", args: []string{"invoke", shop, "approve@order", "--record", "ord_9"}, wantExit: 1,
			wantErrOut: []string{"ACTION_NOT_FOUND", "next: The page has no such action or record now: check the id (and --record) against pling describe TARGET"}},
		{name: "unavailable", args: []string{"invoke", shop, "checkout"}, wantExit: 1,
			wantErrOut: []string{"ACTION_UNAVAILABLE", "Cart is empty", "next: Do what the reason says first"}},
		{name: "invalid params", args: []string{"invoke", shop, "cart.add"}, wantExit: 1, wantErrOut: []string{"INVALID_PARAMS", "details:"}},
		{name: "session", args: []string{"invoke", sess, "cart.add", "--session", "tok_a"}, wantOut: []string{"ok: cart.add", "value: 1"}},
		{name: "outside the session's scope", args: []string{"invoke", sess, "order.refund", "--session", "tok_a"}, wantExit: 1,
			wantErrOut: []string{"CAPABILITY_NOT_EXPOSED", "next: Describe again; do not try a similar id."}},
		{name: "no session", args: []string{"invoke", sess, "cart.add"}, wantExit: 1, wantErrOut: []string{"SESSION_REQUIRED"}},
		{name: "help", args: []string{"invoke", "-h"}, wantErrOut: []string{"Usage: pling invoke TARGET CAPABILITY"}},
		{name: "no capability", args: []string{"invoke", shop}, wantExit: 2, wantErrOut: []string{"want TARGET and CAPABILITY"}},
		{name: "input not JSON", args: []string{"invoke", shop, "cart.add", "--input", "{sku"}, wantExit: 2, wantErrOut: []string{"--input: not a JSON object"}},
		{name: "input not an object", args: []string{"invoke", shop, "cart.add", "--input", "[1]"}, wantExit: 2},
		{name: "input null", args: []string{"invoke", shop, "cart.add", "--input", "null"}, wantExit: 2},
		{name: "record disagrees", args: []string{"invoke", shop, "approve@order", "--input", `{"record":"ord_2"}`, "--record", "ord_1"}, wantExit: 2},
		{name: "bad id", args: []string{"invoke", shop, "cart.add", "--id", "a b"}, wantExit: 2},
		{name: "URL", args: []string{"invoke", "https://shop.example/", "cart.add"}, wantExit: 1, wantErrOut: []string{"no browser at"}},
	})
}

func TestInvokeCommandJSON(t *testing.T) {
	shop := "fixture:" + writeFixture(t, "shop.json", shopFixture)
	tests := []struct {
		name     string
		args     []string
		wantExit int
		check    func(t *testing.T, v map[string]any)
	}{
		{name: "success", args: []string{"invoke", "--json", shop, "cart.add", "--input", `{"sku":"A1"}`, "--id", "buy-1"},
			check: func(t *testing.T, v map[string]any) {
				res := v["result"].(map[string]any)
				if v["ok"] != true || v["requestId"] != "buy-1" || res["value"].(map[string]any)["added"] != true {
					t.Errorf("got %v", v)
				}
			}},
		{name: "business failure", args: []string{"invoke", "--json", shop, "cart.clear"}, wantExit: 1,
			check: func(t *testing.T, v map[string]any) {
				e := v["error"].(map[string]any)
				if v["ok"] != false || e["class"] != "business" || e["code"] != "EXECUTION_FAILED" || e["observed"] == nil {
					t.Errorf("got %v", v)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := checkCmd(t, tt.args, tt.wantExit, nil, nil)
			var v map[string]any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, out)
			}
			tt.check(t, v)
		})
	}
}
