package gateway

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

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

// TokenAuth verifies pl1 delegation tokens with the keys an authority
// publishes at GET /v1/keys, and follows its revocation feed (GET
// /v1/revocations) so that a revoked session is refused. It is a small
// fetcher of its own: keys are fetched at Start, every KeyRefresh, and
// at once (at most every 10 s) when a token names a kid not yet known.
type TokenAuth struct {
	authority string
	audiences []string
	client    *http.Client
	log       *slog.Logger

	mu        sync.Mutex
	verifiers []*runtime.TokenVerifier // one per audience; nil until keys arrive
	kids      map[string]bool
	lastFetch time.Time
	revoked   map[string]time.Time // session id → when it was seen revoked
	fetching  sync.Mutex

	stop chan struct{}
	done sync.WaitGroup
	once sync.Once
}

// KeyRefresh is how often TokenAuth fetches the keys again (the
// authority serves them with max-age=60).
const KeyRefresh = time.Minute

// NewTokenAuth returns a TokenAuth for tokens issued by the authority at
// authorityURL for one of audiences (page origins). Call Start to fetch
// keys and follow revocations, Close to stop.
func NewTokenAuth(authorityURL string, audiences []string, client *http.Client, log *slog.Logger) (*TokenAuth, error) {
	if authorityURL == "" || len(audiences) == 0 {
		return nil, errors.New("gateway: token auth needs an authority URL and at least one audience")
	}
	if client == nil {
		client = &http.Client{Timeout: 40 * time.Second}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &TokenAuth{authority: strings.TrimSuffix(authorityURL, "/"), audiences: audiences, client: client, log: log,
		revoked: map[string]time.Time{}, stop: make(chan struct{})}, nil
}

// Start fetches the keys once (an error is returned, and the fetch is
// retried in the background) and starts following revocations.
func (a *TokenAuth) Start(ctx context.Context) error {
	err := a.fetchKeys(ctx)
	a.done.Add(2)
	go a.refreshLoop()
	go a.followRevocations()
	return err
}

// Close stops the background work and waits for it.
func (a *TokenAuth) Close() {
	a.once.Do(func() { close(a.stop) })
	a.done.Wait()
}

// Ready reports whether keys have been fetched.
func (a *TokenAuth) Ready() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.verifiers != nil
}

// refreshLoop fetches the keys every KeyRefresh, and every 5 s while
// none has been fetched yet (an authority that was down at start).
func (a *TokenAuth) refreshLoop() {
	defer a.done.Done()
	for {
		wait := KeyRefresh
		if !a.Ready() {
			wait = 5 * time.Second
		}
		select {
		case <-a.stop:
			return
		case <-time.After(wait):
		}
		ctx, cancel := a.stopCtx(10 * time.Second)
		if err := a.fetchKeys(ctx); err != nil {
			a.log.Warn("authority keys", "err", err.Error())
		}
		cancel()
	}
}

// stopCtx is a context that ends after d or at Close.
func (a *TokenAuth) stopCtx(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	go func() {
		select {
		case <-a.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

type keysDoc struct {
	Keys []struct {
		Kid       string `json:"kid"`
		Alg       string `json:"alg"`
		PublicKey string `json:"publicKey"`
	} `json:"keys"`
}

func (a *TokenAuth) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.authority+path, nil)
	if err != nil {
		return err
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d", path, resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}

func (a *TokenAuth) fetchKeys(ctx context.Context) error {
	a.fetching.Lock()
	defer a.fetching.Unlock()
	var doc keysDoc
	err := a.get(ctx, "/v1/keys", &doc)
	a.mu.Lock()
	a.lastFetch = time.Now()
	a.mu.Unlock()
	if err != nil {
		return err
	}
	keys := map[string]ed25519.PublicKey{}
	for _, k := range doc.Keys {
		pub, err := base64.RawURLEncoding.DecodeString(k.PublicKey)
		if k.Alg != "Ed25519" || err != nil || len(pub) != ed25519.PublicKeySize {
			continue
		}
		keys[k.Kid] = pub
	}
	vs := make([]*runtime.TokenVerifier, 0, len(a.audiences))
	kids := map[string]bool{}
	for kid := range keys {
		kids[kid] = true
	}
	for _, aud := range a.audiences {
		v, err := runtime.NewTokenVerifier(keys, aud, runtime.RevocationFunc(a.isRevoked))
		if err != nil {
			return err
		}
		vs = append(vs, v)
	}
	a.mu.Lock()
	a.verifiers, a.kids = vs, kids
	a.mu.Unlock()
	return nil
}

func (a *TokenAuth) isRevoked(_ context.Context, id, _ string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, r := a.revoked[id]
	return r, nil
}

// allows reports whether token verifies for one of the audiences and its
// scope allows GatewayScope.
func (a *TokenAuth) allows(ctx context.Context, token string) bool {
	if len(token) > runtime.MaxTokenLen {
		return false
	}
	kid := ""
	if parts := strings.SplitN(token, ".", 3); len(parts) == 3 {
		kid = parts[1]
	}
	a.mu.Lock()
	known, stale := a.kids[kid], time.Since(a.lastFetch) > 10*time.Second
	a.mu.Unlock()
	if !known && stale {
		fctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		if err := a.fetchKeys(fctx); err != nil {
			a.log.Warn("authority keys", "err", err.Error())
		}
		cancel()
	}
	a.mu.Lock()
	vs := a.verifiers
	a.mu.Unlock()
	now := time.Now().UnixMilli()
	for _, v := range vs {
		ss, err := v.Verify(ctx, token, now)
		if err == nil {
			return runtime.MatchAny(ss.Scope, GatewayScope)
		}
	}
	return false
}

// followRevocations long-polls the authority's feed and remembers each
// revoked session id for a day (longer than any token lives). A feed that
// fails is retried with a growing pause; what was learnt is kept.
func (a *TokenAuth) followRevocations() {
	defer a.done.Done()
	cursor, pause := "", time.Second
	for {
		ctx, cancel := a.stopCtx(45 * time.Second)
		var doc struct {
			Cursor  string `json:"cursor"`
			Revoked []struct {
				SessionID string `json:"sessionId"`
			} `json:"revoked"`
		}
		err := a.get(ctx, "/v1/revocations?waitSeconds=30&after="+cursor, &doc)
		cancel()
		select {
		case <-a.stop:
			return
		default:
		}
		if err != nil {
			a.log.Warn("authority revocations", "err", err.Error())
			select {
			case <-a.stop:
				return
			case <-time.After(pause):
			}
			pause = min(2*pause, 30*time.Second)
			continue
		}
		pause = time.Second
		now := time.Now()
		a.mu.Lock()
		for _, e := range doc.Revoked {
			a.revoked[e.SessionID] = now
		}
		for id, at := range a.revoked {
			if now.Sub(at) > 24*time.Hour {
				delete(a.revoked, id)
			}
		}
		a.mu.Unlock()
		if doc.Cursor != "" {
			cursor = doc.Cursor
		}
	}
}
