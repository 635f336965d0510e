package main

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pling-go/pling/gateway"
	"github.com/pling-go/pling/internal/testing/scripted"
	"github.com/pling-go/pling/internal/testing/syncbuf"
)

// TestGatewayLimitsStoreFlag runs two pling gateway commands with one
// --limits-store: one caller going round both gets the default burst once,
// not twice.
func TestGatewayLimitsStoreFlag(t *testing.T) {
	up, keys := gatewayRig(t, func(scripted.Request) scripted.Reply { return scripted.Reply{Content: "ok"} })
	dir := t.TempDir()
	var bases []string
	for range 2 {
		gw := startCmd(t, runGateway, "--addr", "127.0.0.1:0", "--upstream", up.URL, "--models", "m1",
			"--site-keys", keys, "--limits-store", "sqlite:"+filepath.Join(dir, "limits.db"))
		bases = append(bases, gw.url(t))
	}
	allowed := 0
	for i := range 2*gateway.DefaultBurst + 2 {
		res := chatAsSite(t, bases[i%2], `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`)
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			allowed++
		}
	}
	// The default refill (2 a second) may add a token or two while the
	// calls run; two separate limits would allow twice the burst.
	if allowed < gateway.DefaultBurst || allowed > gateway.DefaultBurst+gateway.DefaultBurst/10 {
		t.Errorf("%d allowed across two gateways sharing a store, want about %d (the burst once)", allowed, gateway.DefaultBurst)
	}
}

// TestGatewayLimitsStoreBadSpec: a --limits-store that does not parse, or
// a store that cannot be opened, stops the command, and a password in the
// spec is never printed.
func TestGatewayLimitsStoreBadSpec(t *testing.T) {
	tests := []struct {
		name, spec string
		wantExit   int
		wantErr    string
	}{
		{"not a store", "mysql://u:pw-secret-1@h/db", 2, "want sqlite:PATH"},
		{"sqlite without path", "sqlite:", 2, "needs a path"},
		{"postgres not answering", "postgres://u:pw-secret-1@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", 1, "--limits-store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr syncbuf.Buffer
			code := runGateway(context.Background(), []string{"--addr", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1",
				"--models", "m1", "--limits-store", tt.spec}, &stdout, &stderr)
			if code != tt.wantExit || !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr.String(), tt.wantExit, tt.wantErr)
			}
			if strings.Contains(stdout.String()+stderr.String(), "pw-secret-1") {
				t.Errorf("the password was printed: %q", stderr.String())
			}
		})
	}
}
