package main

import (
	"database/sql"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/gateway"
	"github.com/pling-go/pling/internal/testing/scripted"
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
	withStore := func(spec string) []string {
		return []string{"gateway", "--addr", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1", "--models", "m1", "--limits-store", spec}
	}
	for _, tt := range []cmdCase{
		{name: "not a store", args: withStore("mysql://u:pw-secret-1@h/db"), wantExit: 2, wantErrOut: []string{"want sqlite:PATH"}},
		{name: "sqlite without path", args: withStore("sqlite:"), wantExit: 2, wantErrOut: []string{"needs a path"}},
		{name: "postgres not answering", args: withStore("postgres://u:pw-secret-1@127.0.0.1:1/db?sslmode=disable&connect_timeout=2"), wantExit: 1, wantErrOut: []string{"--limits-store"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut := checkCmd(t, tt.args, tt.wantExit, nil, tt.wantErrOut)
			if strings.Contains(out+errOut, "pw-secret-1") {
				t.Errorf("the password was printed: %q", out+errOut)
			}
		})
	}
}

// TestGatewayRateFlags: --burst and --rate set each caller's bucket, so
// that N instances without a shared store can each be given the site's
// rate ÷ N: with --burst 3 and a slow refill, the fourth call of a burst
// is refused 429.
func TestGatewayRateFlags(t *testing.T) {
	up, keys := gatewayRig(t, func(scripted.Request) scripted.Reply { return scripted.Reply{Content: "ok"} })
	gw := startCmd(t, runGateway, "--addr", "127.0.0.1:0", "--upstream", up.URL, "--models", "m1",
		"--site-keys", keys, "--burst", "3", "--rate", "0.01")
	base := gw.url(t)
	var got []int
	for range 5 {
		res := chatAsSite(t, base, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`)
		res.Body.Close()
		got = append(got, res.StatusCode)
	}
	if diff := cmp.Diff([]int{200, 200, 200, 429, 429}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

// TestGatewayLimitsStoreSwept: a store that only keeps the gateways'
// limits (no authority runs on it) is swept by the gateway: a bucket
// untouched for an hour is deleted within a --sweep-every, a live one
// stays.
func TestGatewayLimitsStoreSwept(t *testing.T) {
	up, keys := gatewayRig(t, func(scripted.Request) scripted.Reply { return scripted.Reply{Content: "ok"} })
	path := filepath.Join(t.TempDir(), "limits.db")
	gw := startCmd(t, runGateway, "--addr", "127.0.0.1:0", "--upstream", up.URL, "--models", "m1",
		"--site-keys", keys, "--limits-store", "sqlite:"+path, "--sweep-every", "200ms")
	base := gw.url(t)
	res := chatAsSite(t, base, `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`) // a live bucket
	res.Body.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO rate_buckets (bucket, tokens, at_ms) VALUES ('gateway:stale', 1, ?)`,
		time.Now().Add(-2*time.Hour).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	count := func(q string) int {
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitFor(t, "the stale bucket swept", 10*time.Second, func() bool {
		return count(`SELECT COUNT(*) FROM rate_buckets WHERE bucket = 'gateway:stale'`) == 0
	})
	if n := count(`SELECT COUNT(*) FROM rate_buckets`); n != 1 {
		t.Errorf("%d buckets left, want the live one", n)
	}
}
