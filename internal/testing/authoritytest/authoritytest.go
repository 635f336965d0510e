// Package authoritytest is test support: a real pling authority on a
// SQLite file in the test's temporary directory, served on loopback, and
// the device grant walked over its HTTP map (create, approve, collect) to
// mint a delegation token. Tests of several packages need both; one copy
// serves them. Product code must not import it (e2e's TestTestSupport
// checks that).
package authoritytest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/pling-go/pling/authority"
)

// OperatorKey is the operator key Start gives an authority whose config
// names none.
const OperatorKey = "operator-key-for-tests"

// Authority is a running authority.
type Authority struct {
	URL         string // of the loopback server
	OperatorKey string // the first of the config's OperatorKeys
	Server      *authority.Server
}

// Start runs authority.NewServer(cfg) on loopback until the test ends.
// cfg.Store nil is a fresh SQLite file; no OperatorKeys is OperatorKey.
// wrap, when not nil, wraps the handler (a fault or a counter in front).
func Start(t testing.TB, cfg authority.Config, wrap func(http.Handler) http.Handler) *Authority {
	t.Helper()
	return StartOn(t, nil, cfg, wrap)
}

// StartOn is Start on the listener ln (nil: a new loopback one), for a
// test that must know the authority's address before its config (the
// passkeys' origin).
func StartOn(t testing.TB, ln net.Listener, cfg authority.Config, wrap func(http.Handler) http.Handler) *Authority {
	t.Helper()
	ctx := context.Background()
	if cfg.Store == nil {
		cfg.Store, _ = SQLite(t)
	}
	if len(cfg.OperatorKeys) == 0 {
		cfg.OperatorKeys = []string{OperatorKey}
	}
	srv, err := authority.NewServer(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	hs := httptest.NewUnstartedServer(h)
	if ln != nil {
		hs.Listener.Close()
		hs.Listener = ln
	}
	hs.Start()
	t.Cleanup(hs.Close)
	return &Authority{URL: hs.URL, OperatorKey: cfg.OperatorKeys[0], Server: srv}
}

// SQLite opens a store on a fresh SQLite file in the test's temporary
// directory, closed when the test ends, and gives the file's path, for a
// test that reads or writes the file beside the store.
func SQLite(t testing.TB) (authority.SQLStore, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "authority.db")
	st, err := authority.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

// SQLiteFile is another connection to the SQLite file at path, as the
// sqlite3 shell would be, beside the store that has it open: it waits out
// the store's locks (busy_timeout, 5 s) and is closed when the test ends,
// if the test has not closed it before.
func SQLiteFile(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Call sends method path to the authority at base with body as JSON (nil:
// none) and bearer as Authorization (""; none), and returns the status
// and the decoded JSON answer (nil when it is not JSON).
func Call(t testing.TB, base, method, path, bearer string, body any) (int, map[string]any) {
	t.Helper()
	a, err := Do(context.Background(), http.DefaultClient, base, method, path, bearer, nil, body)
	if err != nil {
		t.Fatal(err)
	}
	return a.Status, a.Body
}

// Answer is one answer of an authority's HTTP map.
type Answer struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any // Raw decoded; nil when it is not a JSON object
}

// Do sends method path to the authority at base through cl, with body as
// JSON (nil: none), bearer as Authorization (""; none) and the headers
// hdr. An error is a transport error: no answer came. The tests and the
// benchmarks that drive an authority over HTTP all send their requests
// with it, or with NewRequest and Send when they send a body as it is or
// at a moment of their own.
func Do(ctx context.Context, cl *http.Client, base, method, path, bearer string, hdr map[string]string, body any) (Answer, error) {
	var rd io.Reader
	if body != nil {
		j, err := json.Marshal(body)
		if err != nil {
			return Answer{}, err
		}
		rd = bytes.NewReader(j)
	}
	req, err := NewRequest(ctx, method, base+path, bearer, hdr, rd)
	if err != nil {
		return Answer{}, err
	}
	return Send(cl, req)
}

// NewRequest is a request of method to url with body, bearer as
// Authorization (""; none) and the headers hdr.
func NewRequest(ctx context.Context, method, url, bearer string, hdr map[string]string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return req, nil
}

// Send sends req through cl and reads the answer whole. An error is a
// transport error: no answer came.
func Send(cl *http.Client, req *http.Request) (Answer, error) {
	res, err := cl.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return Answer{}, err
	}
	a := Answer{Status: res.StatusCode, Header: res.Header, Raw: raw}
	_ = json.Unmarshal(raw, &a.Body)
	return a, nil
}

// Grant is what a delegation asks for.
type Grant struct {
	Audience string
	Scope    []string
	Agent    string        // "" is "test-agent"
	TTL      time.Duration // 0 is ten minutes
}

// Session is a collected delegation.
type Session struct {
	ID         string // the delegation's id
	PollSecret string
	SID        string // the session id in the token
	Token      string
}

// DeviceGrant walks the device grant at base: the agent asks for g, the
// operator (operatorKey) approves as asked, the agent collects the token.
// Any step not answered as the protocol says fails the test.
func DeviceGrant(t testing.TB, base, operatorKey string, g Grant) Session {
	t.Helper()
	if g.Agent == "" {
		g.Agent = "test-agent"
	}
	if g.TTL == 0 {
		g.TTL = 10 * time.Minute
	}
	code, b := Call(t, base, http.MethodPost, "/v1/delegations", "",
		map[string]any{"audience": g.Audience, "scope": g.Scope, "ttlSeconds": int(g.TTL / time.Second), "agent": g.Agent})
	id, _ := b["id"].(string)
	secret, _ := b["pollSecret"].(string)
	if code != http.StatusCreated || id == "" || secret == "" {
		t.Fatalf("create delegation: %d %v", code, b)
	}
	Approve(t, base, operatorKey, id, nil)
	code, b = Call(t, base, http.MethodPost, "/v1/delegations/"+id+"/token", "", map[string]any{"pollSecret": secret})
	tok, _ := b["token"].(string)
	sid, _ := b["sessionId"].(string)
	if code != http.StatusOK || tok == "" {
		t.Fatalf("collect token: %d %v", code, b)
	}
	return Session{ID: id, PollSecret: secret, SID: sid, Token: tok}
}

// Subject is the person Approve names when its body is nil.
const Subject = "test-person"

// Approve has the operator approve delegation id (body nil: as asked, by
// Subject).
func Approve(t testing.TB, base, operatorKey, id string, body any) {
	t.Helper()
	if body == nil {
		body = map[string]any{"subject": Subject}
	}
	if code, b := Call(t, base, http.MethodPost, "/v1/delegations/"+id+"/approve", operatorKey, body); code != http.StatusOK {
		t.Fatalf("approve %s: %d %v", id, code, b)
	}
}

// DeviceGrant walks the device grant on a.
func (a *Authority) DeviceGrant(t testing.TB, g Grant) Session {
	t.Helper()
	return DeviceGrant(t, a.URL, a.OperatorKey, g)
}
