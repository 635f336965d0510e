// The signing keys: creation, rotation, token signing and the published key set (GET /v1/keys).

package authority

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/pling-go/pling/runtime"
)

func activeKey(keys []SigningKey) *SigningKey {
	for i := range keys {
		if keys[i].RetiredMs == 0 {
			return &keys[i]
		}
	}
	return nil
}

// signingKey is the active key tokens and approvals are signed with now.
func (s *Server) signingKey(ctx context.Context, nowMs int64) (*SigningKey, error) {
	keys, err := s.cfg.Store.Keys(ctx, nowMs)
	if err != nil {
		return nil, err
	}
	k := activeKey(keys)
	if k == nil {
		return nil, errors.New("no active signing key")
	}
	return k, nil
}

func (s *Server) addKey(ctx context.Context) error {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	return s.cfg.Store.AddKey(ctx, SigningKey{Kid: "k" + randomID(9), PrivateKey: priv, CreatedMs: s.nowMs()})
}

// Rotate retires the signing key and starts a new one. The retired key
// stays published until the last token it can have signed expires.
func (s *Server) Rotate(ctx context.Context) error {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	now := s.nowMs()
	return s.cfg.Store.RotateKey(ctx, now, now+s.cfg.MaxTokenTTL.Milliseconds(),
		SigningKey{Kid: "k" + randomID(9), PrivateKey: priv, CreatedMs: now})
}

// sign makes a pl1 token: pl1.<kid>.<payload>.<signature>.
func sign(k *SigningKey, c runtime.Claims) (string, error) {
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	head := "pl1." + k.Kid + "." + b64.EncodeToString(payload)
	sig := ed25519.Sign(ed25519.PrivateKey(k.PrivateKey), []byte(head))
	return head + "." + b64.EncodeToString(sig), nil
}

// rotate is the operator's key rotation: the signing key is retired (still
// published until the last token it can have signed expires) and a new
// one signs from now on. The answer is the keys as GET /v1/keys lists
// them, never cached.
func (s *Server) rotate(w http.ResponseWriter, r *http.Request) {
	if err := s.Rotate(r.Context()); err != nil {
		s.internal(w, r, err)
		return
	}
	s.cfg.Logger.Info("signing key rotated")
	s.writeKeys(w, r, "no-store")
}

func (s *Server) keys(w http.ResponseWriter, r *http.Request) {
	s.writeKeys(w, r, "public, max-age=60")
}

func (s *Server) writeKeys(w http.ResponseWriter, r *http.Request, cache string) {
	keys, err := s.cfg.Store.Keys(r.Context(), s.nowMs())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	out := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		e := map[string]any{"kid": k.Kid, "alg": "Ed25519",
			"publicKey": b64.EncodeToString(ed25519.PrivateKey(k.PrivateKey).Public().(ed25519.PublicKey))}
		if k.NotAfterMs != 0 {
			e["notAfter"] = time.UnixMilli(k.NotAfterMs).UTC().Format(time.RFC3339)
		} else {
			e["notAfter"] = nil
		}
		out = append(out, e)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", cache)
	_ = json.NewEncoder(w).Encode(map[string]any{"keys": out})
}
