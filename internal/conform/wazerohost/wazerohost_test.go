package wazerohost_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/pling-go/pling/agent"
	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/conform/wazerohost"
)

func dist(t *testing.T) string {
	d := os.Getenv("PLING_DIST")
	if d == "" {
		d, _ = filepath.Abs("../../../dist")
		if _, err := os.Stat(filepath.Join(d, wazerohost.TestModule)); err != nil {
			t.Skip(wazerohost.TestModule + " is not built; run make wasm (make test does)")
		}
	}
	return d
}

// TestClientOverWazero drives a fixture page in the real module on wazero
// with the agent client: the recovery rules hold over this transport too.
func TestClientOverWazero(t *testing.T) {
	ctx := context.Background()
	tr, err := wazerohost.Open(ctx, dist(t), []byte(`{
	  "config": {"rateLimit": {"invoke": {"burst": 1, "perSecond": 1000}}},
	  "states": {"n": 0},
	  "actions": [{"id": "inc", "title": "Increment", "run": {"set": {"n": {"add": 1}}, "return": {"ok": true}},
	               "expect": {"state": "n", "change": "increase"}},
	              {"id": "deny", "title": "Needs approval", "approval": "deny", "run": {"return": 1}}]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	c := agent.New(tr)
	desc, err := c.Describe(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(desc.Capabilities) != 2 {
		t.Fatalf("capabilities = %+v", desc.Capabilities)
	}
	for i := 0; i < 3; i++ { // the second and third wait out RATE_LIMITED
		res, err := c.Invoke(ctx, "inc", nil)
		if err != nil {
			t.Fatalf("invoke %d: %v", i, err)
		}
		if string(res.Value) != `{"ok":true}` {
			t.Fatalf("value = %s", res.Value)
		}
	}
	_, err = c.Invoke(ctx, "deny", nil)
	if !errors.Is(err, perr.New(perr.PermissionDenied, "", nil)) {
		t.Fatalf("err = %v, want PERMISSION_DENIED", err)
	}
}
