package authority_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/internal/testing/authoritytest"
	"github.com/pling-go/pling/internal/testing/httpcheck"
)

// TestKeyRotationIsOneTransaction: rotating the
// signing key retires the active one and adds the next in one
// transaction, so a failure (injected: the new key's kid is taken, which
// the insert refuses) leaves the old key active rather than none. Were
// rotation RetireKeys then AddKey, the failed insert would leave the
// store with no active key and every token request would fail.
func TestKeyRotationIsOneTransaction(t *testing.T) {
	forEachStore(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		st := open()
		_, priv, _ := ed25519.GenerateKey(rand.Reader)
		if err := st.AddKey(ctx, authority.SigningKey{Kid: "k1", PrivateKey: priv, CreatedMs: 1}); err != nil {
			t.Fatal(err)
		}
		if err := st.RotateKey(ctx, 10, 100, authority.SigningKey{Kid: "k1", PrivateKey: priv, CreatedMs: 10}); err == nil {
			t.Fatal("rotation onto a taken kid succeeded")
		}
		keys, err := st.Keys(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 1 || keys[0].Kid != "k1" || keys[0].RetiredMs != 0 {
			t.Fatalf("after a failed rotation: %+v, want k1 still active", keys)
		}
		if err := st.RotateKey(ctx, 10, 100, authority.SigningKey{Kid: "k2", PrivateKey: priv, CreatedMs: 10}); err != nil {
			t.Fatal(err)
		}
		keys, _ = st.Keys(ctx, 10)
		if len(keys) != 2 || keys[0].Kid != "k2" || keys[0].RetiredMs != 0 || keys[1].RetiredMs != 10 {
			t.Fatalf("after a rotation: %+v, want k2 active and k1 retired", keys)
		}
	})
}

// TestSigningKeysEncryptedAtRest: with a KEK the
// private keys in the store are sealed (no copy of the database holds
// one); a server without the KEK, or with another one, refuses to start;
// rotating the KEK (the new one as KEK, the old one in OldKEKs) seals the
// keys again under the new one, after which the old KEK alone opens
// nothing. Keys stored plain before a KEK was set are sealed at start
// when the operator says they are theirs (SealPlainKeys); unsealed, the
// private_key column would hold the 64 key bytes as they are, for any copy
// of the database to sign with.
func TestSigningKeysEncryptedAtRest(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	kek1, _ := authority.ParseKEK(authority.NewKEK())
	kek2, _ := authority.ParseKEK(authority.NewKEK())
	sealPlain := false
	start := func(kek []byte, old ...[]byte) error {
		st, err := authority.OpenSQLite(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		_, err = authority.NewServer(ctx, authority.Config{Store: st, Audiences: map[string][]string{origin: {"*"}},
			KEK: kek, OldKEKs: old, SealPlainKeys: sealPlain, Now: func() time.Time { return time.UnixMilli(1e12) }})
		return err
	}
	stored := func() [][]byte {
		db := authoritytest.SQLiteFile(t, path)
		defer db.Close()
		rows, err := db.Query(`SELECT private_key FROM signing_keys`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out [][]byte
		for rows.Next() {
			var b []byte
			_ = rows.Scan(&b)
			out = append(out, b)
		}
		return out
	}
	// A key stored plain (before a KEK was set) ...
	if err := start(nil); err != nil {
		t.Fatal(err)
	}
	plain := stored()
	if len(plain) != 1 || len(plain[0]) != ed25519.PrivateKeySize {
		t.Fatalf("no plain key to start from: %d keys", len(plain))
	}
	// ... is sealed once a KEK is given, with the operator's word that
	// it is theirs.
	sealPlain = true
	if err := start(kek1); err != nil {
		t.Fatal(err)
	}
	sealPlain = false
	for _, b := range stored() {
		if len(b) == ed25519.PrivateKeySize || bytes.Contains(b, plain[0][:32]) {
			t.Fatalf("a private key is stored in plain form")
		}
	}
	for name, tc := range map[string]struct {
		kek  []byte
		want string
	}{
		"without a KEK":    {nil, "KEK"},
		"with another KEK": {kek2, "cannot be decrypted"},
	} {
		if err := start(tc.kek); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: start error %v, want one that says %q", name, err, tc.want)
		}
	}
	// KEK rotation: kek2 new, kek1 old.
	if err := start(kek2, kek1); err != nil {
		t.Fatalf("KEK rotation: %v", err)
	}
	if err := start(kek2); err != nil {
		t.Fatalf("after the KEK rotation, the new KEK alone: %v", err)
	}
	if err := start(kek1); err == nil {
		t.Errorf("after the KEK rotation the old KEK still opens the keys")
	}
}

// TestPlainKeyBesideKEKNeverUsed: with a KEK set, a plain private key
// written into the store (by anyone who can write the database, who then
// holds it) refuses the start, naming its kid; one written while the
// authority runs is neither published nor used to sign. Used, it would
// sign tokens that every follower accepts.
func TestPlainKeyBesideKEKNeverUsed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	kek, _ := authority.ParseKEK(authority.NewKEK())
	now := func() time.Time { return time.UnixMilli(1e12) }
	st, err := authority.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := authority.NewServer(ctx, authority.Config{Store: st, Audiences: map[string][]string{origin: {"*"}}, KEK: kek,
		OperatorKeys: []string{opKey}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	// The attacker's key, newer than the authority's: the active one if
	// it were read.
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	if err := st.AddKey(ctx, authority.SigningKey{Kid: "attacker", PrivateKey: priv, CreatedMs: 1e12 - 1}); err != nil {
		t.Fatal(err)
	}
	t.Run("a running authority neither publishes nor uses it", func(t *testing.T) {
		hs := httptest.NewServer(srv)
		defer hs.Close()
		code, b := httpcheck.Get(t, hs.URL+"/v1/keys")
		if code != 200 || strings.Contains(b, "attacker") || !strings.Contains(b, `"kid"`) {
			t.Errorf("GET /v1/keys: %d %s", code, b)
		}
		tok := authoritytest.DeviceGrant(t, hs.URL, opKey, authoritytest.Grant{Audience: origin, Scope: []string{"*"}}).Token
		if kid := strings.Split(tok, ".")[1]; kid == "attacker" {
			t.Errorf("a token was signed with the plain key")
		}
	})
	t.Run("a start refuses it", func(t *testing.T) {
		_, err := authority.NewServer(ctx, authority.Config{Store: st, Audiences: map[string][]string{origin: {"*"}}, KEK: kek, Now: now})
		if !errors.Is(err, authority.ErrPlainKey) || !strings.Contains(err.Error(), "attacker") {
			t.Errorf("start with a plain key beside the KEK: %v, want ErrPlainKey naming the kid", err)
		}
	})
}
