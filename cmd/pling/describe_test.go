package main

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pling-go/pling/schema"
)

func TestDescribeCommand(t *testing.T) {
	shop, sess := fixtureTargets(t)
	runCmdCases(t, []cmdCase{
		{name: "readable", args: []string{"describe", shop}, wantOut: []string{
			"Shop  https://shop.example/", "revision r", "Capabilities (3)",
			"approve@order", "record: order, 2 total; pass input.record; visible ord_1; 1 offscreen",
			"cart.add", "input: sku string (required)", "cart.clear", "destructive",
			"Unavailable", "checkout", "Cart is empty", "cart.count = 0", "order: 2 total"}},
		{name: "flags after the target", args: []string{"describe", sess, "--session", "tok_a"}, wantOut: []string{"Capabilities (1)", "cart.add"}},
		{name: "help", args: []string{"describe", "--help"}, wantErrOut: []string{"Usage: pling describe TARGET"}},
		{name: "help through pling help", args: []string{"help", "describe"}, wantErrOut: []string{"Usage: pling describe TARGET"}},
		{name: "no target", args: []string{"describe"}, wantExit: 2, wantErrOut: []string{"want one TARGET"}},
		{name: "two targets", args: []string{"describe", shop, shop}, wantExit: 2},
		{name: "unknown flag", args: []string{"describe", "--nope", shop}, wantExit: 2},
		{name: "bad target", args: []string{"describe", "shop"}, wantExit: 2, wantErrOut: []string{"not a target"}},
		{name: "URL", args: []string{"describe", "https://shop.example/"}, wantExit: 1, wantErrOut: []string{"no browser at"}},
		{name: "session required", args: []string{"describe", sess}, wantExit: 1,
			wantErrOut: []string{"SESSION_REQUIRED", "next: Reauthenticate"}},
	})
}

func TestDescribeCommandJSON(t *testing.T) {
	shop := "fixture:" + writeFixture(t, "shop.json", shopFixture)
	code, out, errOut := runCmd(t, "describe", "--json", shop, "--max-records", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var d schema.SurfaceDescription
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("stdout is not a description: %v\n%s", err, out)
	}
	var ids []string
	for _, c := range d.Capabilities {
		ids = append(ids, c.ID)
	}
	if diff := cmp.Diff([]string{"approve@order", "cart.add", "cart.clear"}, ids); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	if v := d.Capabilities[0].Record.Visible; len(v) != 0 {
		t.Errorf("--max-records 0 listed %v", v)
	}

	sess := "fixture:" + writeFixture(t, "session.json", sessionFixture)
	code, out, _ = runCmd(t, "describe", "--json", sess, "--session", "nope")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var f struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("stdout is not a failure: %v\n%s", err, out)
	}
	if f.Error["class"] != "protocol" || f.Error["code"] != "SESSION_INVALID" {
		t.Errorf("failure %v, want a protocol SESSION_INVALID", f.Error)
	}
}
