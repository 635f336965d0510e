package gateway

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pling-go/pling/authority/follow"
	"github.com/pling-go/pling/runtime"
)

// GatewayScope is what a delegation token's scope must allow for the
// gateway to accept it: a pattern such as "gateway:*" or "*" matches it.
const GatewayScope = "gateway:chat"

// caller is who a request comes from, by a name that is never a secret:
// "site:" or "token:" and the first 16 hex digits of the credential's
// SHA-256.
type caller string

// bearer is the credential of an Authorization: Bearer header.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// authenticate returns the caller, or "" when the credential is missing
// or fails: a site key (compared in constant time by digest, every key
// tried) or a pl1 delegation token whose scope allows GatewayScope.
func (s *Server) authenticate(ctx context.Context, r *http.Request) caller {
	cred := bearer(r)
	if cred == "" {
		return ""
	}
	d := sha256.Sum256([]byte(cred))
	name := hex.EncodeToString(d[:8])
	match := 0
	for i := range s.siteKeys {
		match |= subtle.ConstantTimeCompare(d[:], s.siteKeys[i][:])
	}
	if match == 1 {
		return caller("site:" + name)
	}
	if s.cfg.Tokens != nil && strings.HasPrefix(cred, "pl1.") && s.cfg.Tokens.allows(ctx, cred) {
		return caller("token:" + name)
	}
	return ""
}

// TokenAuth verifies pl1 delegation tokens as a page that follows the
// authority does (package authority/follow, one implementation of key
// fetching and revocation following): one follower per audience fetches
// the keys an authority publishes at GET /v1/keys (again when a token
// names a kid not yet known) and long-polls its revocation feed, so a
// revoked session is refused within seconds. It fails closed: while a
// follower's feed is not current, its tokens are refused.
type TokenAuth struct {
	authority string
	audiences []string
	client    *http.Client
	log       *slog.Logger

	mu        sync.Mutex
	followers []*follow.Follower // one per audience, from Start
	once      sync.Once
}

// startWait bounds how long Start waits for the first sync.
const startWait = 2 * time.Second

// NewTokenAuth returns a TokenAuth for tokens issued by the authority at
// authorityURL for one of audiences (page origins). Call Start to fetch
// keys and follow revocations, Close to stop.
func NewTokenAuth(authorityURL string, audiences []string, client *http.Client, log *slog.Logger) (*TokenAuth, error) {
	if authorityURL == "" || len(audiences) == 0 {
		return nil, errors.New("gateway: token auth needs an authority URL and at least one audience")
	}
	if client == nil {
		// Longer than the feed's long poll (20 s) with room to spare.
		client = &http.Client{Timeout: 40 * time.Second}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &TokenAuth{authority: strings.TrimSuffix(authorityURL, "/"), audiences: audiences, client: client, log: log}, nil
}

// Start starts following the authority and waits, bounded by ctx and a
// few seconds, for the first fetch of keys and feed; when that has not
// happened an error is returned and the followers keep retrying in the
// background (with a growing pause, at most 30 s).
func (a *TokenAuth) Start(ctx context.Context) error {
	fs := make([]*follow.Follower, 0, len(a.audiences))
	for _, aud := range a.audiences {
		f, err := follow.New(a.authority, aud, follow.WithTransport(follow.HTTPTransport{Client: a.client}))
		if err != nil {
			for _, f := range fs {
				f.Close()
			}
			return fmt.Errorf("gateway: %w", err)
		}
		fs = append(fs, f)
	}
	a.mu.Lock()
	a.followers = fs
	a.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	for _, f := range fs {
		select {
		case <-f.Ready():
		case <-wctx.Done():
			return errors.New("gateway: the authority's keys and revocation feed were not fetched yet")
		}
	}
	return nil
}

// Close stops the followers and waits for them.
func (a *TokenAuth) Close() {
	a.once.Do(func() {
		a.mu.Lock()
		fs := a.followers
		a.mu.Unlock()
		for _, f := range fs {
			f.Close()
		}
	})
}

// Ready reports whether every follower has fetched the keys and the feed.
func (a *TokenAuth) Ready() bool {
	a.mu.Lock()
	fs := a.followers
	a.mu.Unlock()
	if len(fs) == 0 {
		return false
	}
	for _, f := range fs {
		select {
		case <-f.Ready():
		default:
			return false
		}
	}
	return true
}

// Current reports whether every follower's revocation feed is current
// (a follower that cannot keep up refuses every token: /readyz says so).
func (a *TokenAuth) Current() bool {
	a.mu.Lock()
	fs := a.followers
	a.mu.Unlock()
	now := time.Now().UnixMilli()
	for _, f := range fs {
		if f.Current(now) != nil {
			return false
		}
	}
	return len(fs) > 0
}

// Waiting says what the first follower not current waits for ("" when
// every one is current): what /readyz answers.
func (a *TokenAuth) Waiting() string {
	a.mu.Lock()
	fs := a.followers
	a.mu.Unlock()
	if len(fs) == 0 {
		return "authority keys not fetched"
	}
	now := time.Now().UnixMilli()
	for _, f := range fs {
		if why := f.Waiting(now); why != "" {
			return why
		}
		if f.Current(now) != nil {
			return "revocation feed not current"
		}
	}
	return ""
}

// allows reports whether token verifies for one of the audiences and its
// scope allows GatewayScope. Before the first sync it is refused at once
// (not after the follower's wait for it).
func (a *TokenAuth) allows(ctx context.Context, token string) bool {
	if len(token) > runtime.MaxTokenLen || !a.Ready() {
		return false
	}
	a.mu.Lock()
	fs := a.followers
	a.mu.Unlock()
	now := time.Now().UnixMilli()
	for _, f := range fs {
		ss, err := f.Verify(ctx, token, now)
		if err == nil {
			return runtime.MatchAny(ss.Scope, GatewayScope)
		}
	}
	return false
}
