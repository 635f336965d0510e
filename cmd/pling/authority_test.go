package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
	"github.com/pling-go/pling/internal/testing/pgtest"
)

// TestAuthorityCommand runs pling authority on a real SQLite file, and on
// a real PostgreSQL with a password in its DSN, and walks the device grant
// over its HTTP map, with the production routes; the password is never
// printed or logged.
func TestAuthorityCommand(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		testAuthorityCommand(t, "sqlite:"+filepath.Join(t.TempDir(), "a.db"), "")
	})
	t.Run("postgres", func(t *testing.T) {
		// The throwaway cluster trusts loopback, so any password connects.
		dsn := strings.Replace(pgtest.DSN(t), "postgres@", "postgres:pg-s3cret-pw@", 1)
		testAuthorityCommand(t, dsn, "pg-s3cret-pw")
	})
}

func testAuthorityCommand(t *testing.T, store, password string) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "operators")
	if err := os.WriteFile(keys, []byte("# operators\nop-secret-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kekFile := filepath.Join(dir, "kek")
	if err := os.WriteFile(kekFile, []byte(testKEK+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auth := startCmd(t, runAuthority, "--addr", "127.0.0.1:0", "--store", store,
		"--operator-keys", keys, "--kek-file", kekFile, "--audience", "https://shop.example=orders.*", "--delegation-burst", "2", "--delegation-rate", "0.01")
	base := auth.url(t)

	call := func(method, path string, body any) (int, map[string]any) {
		t.Helper()
		return authoritytest.Call(t, base, method, path, "", body)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if st, b := call("GET", p, nil); st != 200 {
			t.Errorf("%s: %d %v", p, st, b)
		}
	}
	if st, b := call("POST", "/v1/delegations", map[string]any{"agent": strings.Repeat("x", 64<<10)}); st != 413 {
		t.Errorf("oversized body: %d %v, want 413", st, b)
	}
	grant := authoritytest.DeviceGrant(t, base, "op-secret-1",
		authoritytest.Grant{Audience: "https://shop.example", Scope: []string{"orders.read"}, TTL: time.Minute, Agent: "a"})
	tok, secret := grant.Token, grant.PollSecret
	// The burst of 2 is spent (the oversized body counted: the limit comes
	// before the body is read).
	st, b := call("POST", "/v1/delegations", map[string]any{"audience": "https://shop.example", "scope": []string{"orders.read"}, "ttlSeconds": 60, "agent": "a"})
	if e, _ := b["error"].(map[string]any); st != 429 || e["code"] != "RATE_LIMITED" {
		t.Errorf("past --delegation-burst: %d %v, want 429 RATE_LIMITED", st, b)
	}

	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`pling_authority_requests_total{code="201",route="POST /v1/delegations"} 1`,
		`pling_authority_requests_total{code="413",route="POST /v1/delegations"} 1`, "pling_authority_request_seconds", "pling_authority_store_errors_total 0",
		`pling_authority_requests_total{code="429",route="POST /v1/delegations"} 1`, "pling_authority_rate_limited_total 1"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if code := auth.stop(t); code != 0 {
		t.Errorf("exit %d; stderr %s", code, auth.stderr.String())
	}
	logs := auth.stderr.String() + auth.stdout.String()
	secrets := map[string]string{"token": tok, "poll secret": secret, "operator key": "op-secret-1"}
	if password != "" {
		secrets["store password"] = password
		if !strings.Contains(logs, "xxxxx") {
			t.Errorf("the store is not named (redacted) in the output: %s", logs)
		}
	}
	for name, secretText := range secrets {
		if strings.Contains(logs, secretText) {
			t.Errorf("the output holds the %s", name)
		}
	}
	if !strings.Contains(logs, "route=") {
		t.Errorf("no request logged: %s", logs)
	}
}

func TestAuthorityStoreFlag(t *testing.T) {
	for _, c := range []struct{ store, want string }{
		{"pling-authority.db", `--store: store "pling-authority.db": want sqlite:PATH or a postgres://USER@HOST/DB URL`},
		{"sqlite:", `--store: store "sqlite:": sqlite: needs a path`},
		{"mysql://root:hunter2@db/x", `--store: store "mysql://root:xxxxx@db/x": want sqlite:PATH`},
	} {
		t.Run(c.store, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := runAuthority(context.Background(), []string{"--store", c.store}, &out, &errb)
			if code != 2 || !strings.Contains(errb.String(), c.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errb.String(), c.want)
			}
			if strings.Contains(errb.String()+out.String(), "hunter2") {
				t.Errorf("the password is printed: %q", errb.String())
			}
		})
	}
}

// TestAuthorityKEK: pling authority refuses to
// start on PostgreSQL without a key-encryption key; on SQLite without one
// it makes PATH.kek beside the database, mode 0600, and uses it; a KEK
// file others may read is refused. Without a KEK the PostgreSQL store
// would start with its signing keys in plain form.
func TestAuthorityKEK(t *testing.T) {
	t.Setenv(kekEnv, "")
	dir := t.TempDir()
	loose := filepath.Join(dir, "loose.kek")
	if err := os.WriteFile(loose, []byte(testKEK), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"postgres without a KEK", []string{"--store", "postgres://pling@127.0.0.1:1/auth"}, "needs a key-encryption key"},
		{"KEK file others may read", []string{"--store", "sqlite:" + filepath.Join(dir, "x.db"), "--kek-file", loose}, "chmod 600"},
		{"malformed KEK file", []string{"--store", "sqlite:" + filepath.Join(dir, "x.db"), "--kek-file", filepath.Join(dir, "operators-missing")}, "--kek-file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := runAuthority(context.Background(), c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errb.String(), c.want)
			}
		})
	}
	t.Run("sqlite makes its KEK file", func(t *testing.T) {
		db := filepath.Join(dir, "a.db")
		var errb bytes.Buffer
		kek, _, err := authorityKEK(authority.StoreSpec("sqlite:"+db), "", "", &errb)
		if err != nil || len(kek) != authority.KEKSize {
			t.Fatalf("KEK %d bytes, %v", len(kek), err)
		}
		st, err := os.Stat(db + ".kek")
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("KEK file: %v %v, want mode 0600", st, err)
		}
		again, _, err := authorityKEK(authority.StoreSpec("sqlite:"+db), "", "", &errb)
		if err != nil || !bytes.Equal(again, kek) {
			t.Errorf("a second start uses another KEK (%v)", err)
		}
	})
}
