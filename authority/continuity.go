package authority

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/idchars"
	"github.com/pling-go/pling/runtime"
	"github.com/prometheus/client_golang/prometheus"
)

// The continuity service (docs/authority.md "Continuity"): tasks whose
// JSON state an agent carries across pages, reloads and agents; optimistic
// writes by revision (If-Match), exclusive by lease; every write may carry
// an Idempotency-Key whose first answer is stored with the write.

// continuity is the Server's continuity state.
type continuity struct {
	leaseHeld prometheus.Counter
	replays   prometheus.Counter

	mu        sync.Mutex
	keysFP    string                            // the kids the verifiers were built from
	verifiers map[string]*runtime.TokenVerifier // by audience
}

func newContinuity() continuity {
	return continuity{
		leaseHeld: prometheus.NewCounter(prometheus.CounterOpts{Name: "pling_authority_lease_held_total",
			Help: "Lease acquires refused with CONTINUITY_LEASE_HELD (contention)."}),
		replays: prometheus.NewCounter(prometheus.CounterOpts{Name: "pling_authority_idempotent_replays_total",
			Help: "Writes answered from an Idempotency-Key's stored answer."}),
	}
}

func (s *Server) routeContinuity(m *http.ServeMux) {
	m.HandleFunc("POST /v1/tasks", s.task(true, s.createTask))
	m.HandleFunc("GET /v1/tasks/{id}", s.task(false, s.getTask))
	m.HandleFunc("PUT /v1/tasks/{id}", s.task(true, s.putTask))
	m.HandleFunc("POST /v1/tasks/{id}/lease", s.task(true, s.acquireLease))
	m.HandleFunc("DELETE /v1/tasks/{id}/lease", s.task(true, s.revokeLease))
	m.HandleFunc("POST /v1/tasks/{id}/lease/renew", s.task(true, s.renewLease))
	m.HandleFunc("POST /v1/tasks/{id}/lease/release", s.task(true, s.releaseLease))
}

// tcall is one continuity request: its owner, body, clock and
// idempotency key.
type tcall struct {
	w       http.ResponseWriter
	r       *http.Request
	owner   string
	body    []byte
	nowMs   int64
	key     string
	digest  []byte
	srv     *Server
	ifMatch string
}

// idem is the record for a write's answer, nil without a key.
func (c *tcall) idem(render func(any) (int, []byte)) *Idempotency {
	if c.key == "" {
		return nil
	}
	return &Idempotency{Owner: c.owner, Key: c.key, Digest: c.digest, CreatedMs: c.nowMs,
		ExpiresMs: c.nowMs + c.srv.cfg.IdempotencyTTL.Milliseconds(), Answer: render}
}

func (s *Server) contFail(w http.ResponseWriter, code perr.Code, msg string, extra map[string]any) {
	e := map[string]any{"code": string(code), "message": msg}
	for k, v := range extra {
		e[k] = v
	}
	writeJSON(w, perr.ContinuityHTTPStatus(code), map[string]any{"error": e})
}

// badRequest refuses input that is not a request the service can take.
// The Continuity registry has no request-shape code: CONTINUITY_INVALID_STATE
// (RATIONALE.md "Why CONTINUITY_INVALID_STATE for malformed requests?").
func (s *Server) badRequest(w http.ResponseWriter, msg string) {
	s.contFail(w, perr.ContinuityInvalidState, msg, nil)
}

func (s *Server) storageFail(w http.ResponseWriter, r *http.Request, err error) {
	s.storeErrors.Inc()
	s.cfg.Logger.Error("store", "route", r.Pattern, "err", err.Error())
	// CONTINUITY_STORAGE_TIMEOUT is reserved in the registry: a deadline
	// is reported as its canonical parent until it ships.
	s.contFail(w, perr.ContinuityStorageUnavailable, "The task store could not answer; nothing is known to have changed", nil)
}

// fromStore answers a store error.
func (c *tcall) fromStore(err error) {
	s, w := c.srv, c.w
	var held *LeaseHeldError
	var rp *Replayed
	switch {
	case errors.As(err, &rp):
		if !bytes.Equal(rp.Digest, c.digest) {
			s.badRequest(w, "The Idempotency-Key was used for a different request")
			return
		}
		s.cont.replays.Inc()
		w.Header().Set("Idempotent-Replayed", "true")
		writeRaw(w, rp.Status, rp.Body)
	case errors.As(err, &held):
		s.cont.leaseHeld.Inc()
		w.Header().Set("Retry-After", strconv.FormatInt((held.RetryAfterMs+999)/1000, 10))
		s.contFail(w, perr.ContinuityLeaseHeld, "Another holder has the lease", map[string]any{"retryAfterMs": held.RetryAfterMs})
	default:
		for _, f := range taskFailures {
			if errors.Is(err, f.err) {
				s.contFail(w, f.code, f.msg, nil)
				return
			}
		}
		s.storageFail(w, c.r, err)
	}
}

// taskFailures are the store's task errors a client is told about, with
// the code and the message each is answered with.
var taskFailures = []struct {
	err  error
	code perr.Code
	msg  string
}{
	{ErrNotFound, perr.ContinuityTaskNotFound, "No such task"},
	{ErrOwnerMismatch, perr.ContinuityOwnerMismatch, "The task belongs to another owner"},
	{ErrTaskExists, perr.ContinuityTaskExists, "A task with this id exists"},
	{ErrRevisionConflict, perr.ContinuityRevisionConflict, "The task changed since that revision; read it again"},
	{ErrLeaseExpired, perr.ContinuityLeaseExpired, "The lease is not live"},
	{ErrLeaseRevoked, perr.ContinuityLeaseRevoked, "The owner revoked the lease"},
	{ErrInvalidState, perr.ContinuityInvalidState, "The task is done or cancelled and accepts no more writes"},
}

// answer renders a JSON answer to bytes (what is stored for a key).
func answer(status int, v any) (int, []byte) {
	b, _ := json.Marshal(v)
	return status, append(b, '\n')
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func rfc3339ms(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// storeFailure marks an error of the store met while verifying a token.
type storeFailure struct{ err error }

func (e *storeFailure) Error() string { return e.err.Error() }
func (e *storeFailure) Unwrap() error { return e.err }

// verifierFor returns the page verifier for audience built on keys (one
// per audience, rebuilt when the authority's key set changes), whose
// revocation check is the store's session record.
func (s *Server) verifierFor(audience string, keys []SigningKey) (*runtime.TokenVerifier, error) {
	kids := make([]string, 0, len(keys))
	pub := make(map[string]ed25519.PublicKey, len(keys))
	for _, k := range keys {
		kids = append(kids, k.Kid)
		pub[k.Kid] = ed25519.PrivateKey(k.PrivateKey).Public().(ed25519.PublicKey)
	}
	sort.Strings(kids)
	fp := strings.Join(kids, ",")
	s.cont.mu.Lock()
	defer s.cont.mu.Unlock()
	if fp != s.cont.keysFP {
		s.cont.keysFP, s.cont.verifiers = fp, map[string]*runtime.TokenVerifier{}
	}
	if v := s.cont.verifiers[audience]; v != nil {
		return v, nil
	}
	v, err := runtime.NewTokenVerifier(pub, audience, runtime.RevocationFunc(func(ctx context.Context, id, _ string) (bool, error) {
		se, err := s.cfg.Store.Session(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return true, nil // no session of ours: fail closed
		}
		if err != nil {
			return false, &storeFailure{err}
		}
		return se.RevokedMs != 0, nil
	}))
	if err != nil {
		return nil, err
	}
	s.cont.verifiers[audience] = v
	return v, nil
}

// owner authenticates the request: a pl1 token of this authority, for an
// audience it issues for, verified by the page runtime's TokenVerifier
// (signature, expiry, not-before) and not revoked. The owner is the
// token's audience and subject.
func (s *Server) owner(w http.ResponseWriter, r *http.Request, nowMs int64) (string, bool) {
	tok := bearer(r)
	unauthorized := func() (string, bool) {
		s.contFail(w, perr.ContinuityUnauthorized, "A valid delegation token is required", nil)
		return "", false
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 4 || parts[0] != "pl1" || len(tok) > runtime.MaxTokenLen {
		return unauthorized()
	}
	// The audience only picks which verifier checks the token (the one
	// for that audience, which refuses any other): nothing is trusted
	// before the signature verifies.
	var peek struct {
		Aud string `json:"aud"`
	}
	if raw, err := b64.DecodeString(parts[2]); err != nil || json.Unmarshal(raw, &peek) != nil {
		return unauthorized()
	}
	if _, ok := s.cfg.Audiences[peek.Aud]; !ok {
		return unauthorized()
	}
	keys, err := s.cfg.Store.Keys(r.Context(), nowMs)
	if err != nil {
		s.storageFail(w, r, err)
		return "", false
	}
	if len(keys) == 0 {
		return unauthorized()
	}
	v, err := s.verifierFor(peek.Aud, keys)
	if err != nil {
		return unauthorized()
	}
	ss, err := v.Verify(r.Context(), tok, nowMs)
	var sf *storeFailure
	if errors.As(err, &sf) {
		s.storageFail(w, r, sf.err)
		return "", false
	}
	if err != nil {
		return unauthorized()
	}
	return enc([]string{ss.Audience, ss.Subject}), true
}

// task wraps a continuity handler: owner, body (capped), Idempotency-Key
// and If-Match syntax, in that order; a refusal changes nothing.
func (s *Server) task(write bool, h func(c *tcall)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), taskStoreTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		c := &tcall{w: w, r: r, srv: s, nowMs: s.nowMs()}
		var ok bool
		if c.owner, ok = s.owner(w, r, c.nowMs); !ok {
			return
		}
		data, tooLarge, err := s.readCapped(w, r, s.taskBodyCap(), perr.ContinuityInvalidState)
		if tooLarge {
			return
		} else if err != nil {
			s.badRequest(w, "The request body could not be read")
			return
		}
		c.body = data
		if write {
			c.key = r.Header.Get("Idempotency-Key")
			if _, present := r.Header["Idempotency-Key"]; present && !validIdemKey(c.key) {
				s.badRequest(w, "Idempotency-Key must be 1–255 visible ASCII characters")
				return
			}
			c.ifMatch = r.Header.Get("If-Match")
			d := sha256.New()
			for _, p := range []string{r.Method, r.URL.Path, c.ifMatch} {
				d.Write([]byte(p))
				d.Write([]byte{0})
			}
			d.Write(data)
			c.digest = d.Sum(nil)
		}
		h(c)
	}
}

// taskStoreTimeout bounds the store calls of one continuity request; a
// store that does not answer in time is CONTINUITY_STORAGE_UNAVAILABLE.
const taskStoreTimeout = 5 * time.Second

func (s *Server) taskBodyCap() int64 { return s.cfg.MaxStateBytes + 4096 }

func validIdemKey(k string) bool {
	if k == "" || len(k) > 255 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

func validTaskID(id string) bool {
	return idchars.Of(id, 1, 128, "._-")
}

// decode reads the call's body as one strict JSON object into v.
func (c *tcall) decode(v any) bool {
	d := json.NewDecoder(bytes.NewReader(c.body))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil || d.More() || !unambiguous(c.body, v) {
		c.srv.badRequest(c.w, "The request body is not the expected JSON object")
		return false
	}
	if !cleanJSON(c.body) {
		c.srv.notText(c.w, "The request body holds bytes that are not text (invalid UTF-8 or NUL)")
		return false
	}
	return true
}

// state checks a state: a JSON object within MaxStateBytes, compacted.
func (c *tcall) state(raw json.RawMessage) ([]byte, bool) {
	var buf bytes.Buffer
	if len(raw) == 0 || raw[0] != '{' || json.Compact(&buf, raw) != nil {
		c.srv.badRequest(c.w, "state must be a JSON object")
		return nil, false
	}
	if int64(buf.Len()) > c.srv.cfg.MaxStateBytes {
		c.srv.failStatus(c.w, http.StatusRequestEntityTooLarge, perr.ContinuityInvalidState,
			"state is larger than "+strconv.FormatInt(c.srv.cfg.MaxStateBytes, 10)+" bytes")
		return nil, false
	}
	return buf.Bytes(), true
}

type createTaskReq struct {
	TaskID *string         `json:"taskId"`
	State  json.RawMessage `json:"state"`
	// IdleSeconds: how long the task is kept when nobody writes it
	// (docs/operations.md "Retention"; default Retention.TaskIdle).
	IdleSeconds *int64 `json:"idleSeconds"`
}

func (s *Server) createTask(c *tcall) {
	var req createTaskReq
	if !c.decode(&req) {
		return
	}
	id := "t" + randomID(16)
	if req.TaskID != nil {
		if !validTaskID(*req.TaskID) {
			s.badRequest(c.w, "taskId must be 1–128 characters of [A-Za-z0-9._-]")
			return
		}
		id = *req.TaskID
	}
	idleMs, ok := s.taskIdle(c, req.IdleSeconds)
	if !ok {
		return
	}
	st, ok := c.state(req.State)
	if !ok {
		return
	}
	render := func(res any) (int, []byte) {
		t := res.(Task)
		return answer(http.StatusCreated, map[string]any{"taskId": t.ID, "revision": t.Revision})
	}
	t, err := s.cfg.Store.CreateTask(c.r.Context(), Task{ID: id, Owner: c.owner, Revision: 1, State: st,
		CreatedMs: c.nowMs, UpdatedMs: c.nowMs, IdleMs: idleMs}, c.idem(render))
	c.reply(t, err, render)
}

func etag(rev int64) string { return `"` + strconv.FormatInt(rev, 10) + `"` }

func (s *Server) getTask(c *tcall) {
	if len(bytes.TrimSpace(c.body)) != 0 {
		s.badRequest(c.w, "GET takes no body")
		return
	}
	t, err := s.cfg.Store.Task(c.r.Context(), c.r.PathValue("id"))
	if err == nil && t.Owner != c.owner {
		err = ErrOwnerMismatch
	}
	if err != nil {
		c.fromStore(err)
		return
	}
	var lease any
	if t.LeaseID != "" && c.nowMs < t.LeaseExpiresMs {
		lease = map[string]any{"holder": t.LeaseHolder, "expiresAt": rfc3339ms(t.LeaseExpiresMs)}
	}
	c.w.Header().Set("ETag", etag(t.Revision))
	c.send(answer(http.StatusOK, map[string]any{"taskId": t.ID, "revision": t.Revision,
		"state": json.RawMessage(t.State), "lease": lease, "terminal": isTerminal(t.State),
		"createdAt": rfc3339ms(t.CreatedMs), "updatedAt": rfc3339ms(t.UpdatedMs)}))
}

type leaseReq struct {
	Holder     string `json:"holder"`
	TTLSeconds int64  `json:"ttlSeconds"`
}

func leaseAnswer(res any) (int, []byte) {
	l := res.(Lease)
	return answer(http.StatusOK, map[string]any{"leaseId": l.ID, "holder": l.Holder, "expiresAt": rfc3339ms(l.ExpiresMs)})
}

func (s *Server) ttlOK(c *tcall, ttl int64, optional bool) bool {
	maxTTL := int64(s.cfg.MaxLeaseTTL / time.Second)
	if (optional && ttl == 0) || (ttl >= 1 && ttl <= maxTTL) {
		return true
	}
	s.badRequest(c.w, "ttlSeconds must be between 1 and "+strconv.FormatInt(maxTTL, 10))
	return false
}

func (s *Server) acquireLease(c *tcall) {
	var req leaseReq
	if !c.decode(&req) {
		return
	}
	if req.Holder == "" || len(req.Holder) > 256 {
		s.badRequest(c.w, "holder must be 1–256 characters")
		return
	}
	if !validText(req.Holder, 256) {
		s.notText(c.w, "holder must be text without control characters")
		return
	}
	if !s.ttlOK(c, req.TTLSeconds, false) {
		return
	}
	l, err := s.cfg.Store.AcquireLease(c.r.Context(), LeaseRequest{TaskID: c.r.PathValue("id"), Owner: c.owner,
		LeaseID: "l" + randomID(16), Holder: req.Holder, TTLMs: req.TTLSeconds * 1000, NowMs: c.nowMs,
		SkewMs: s.cfg.MaxClockSkew.Milliseconds()}, c.idem(leaseAnswer))
	c.reply(l, err, leaseAnswer)
}

type leaseIDReq struct {
	LeaseID    string `json:"leaseId"`
	TTLSeconds int64  `json:"ttlSeconds,omitempty"`
}

func (s *Server) leaseID(c *tcall, allowTTL bool) (leaseIDReq, bool) {
	var req leaseIDReq
	if !c.decode(&req) {
		return req, false
	}
	if req.LeaseID == "" || len(req.LeaseID) > 128 {
		s.badRequest(c.w, "leaseId is required")
		return req, false
	}
	if !allowTTL && req.TTLSeconds != 0 {
		s.badRequest(c.w, "ttlSeconds is not taken here")
		return req, false
	}
	return req, s.ttlOK(c, req.TTLSeconds, true)
}

func (s *Server) renewLease(c *tcall) {
	req, ok := s.leaseID(c, true)
	if !ok {
		return
	}
	l, err := s.cfg.Store.RenewLease(c.r.Context(), c.r.PathValue("id"), c.owner, req.LeaseID, req.TTLSeconds*1000, c.nowMs, c.idem(leaseAnswer))
	c.reply(l, err, leaseAnswer)
}

func endAnswer(status string) func(any) (int, []byte) {
	return func(res any) (int, []byte) {
		return answer(http.StatusOK, map[string]any{"leaseId": res.(Lease).ID, "status": status})
	}
}

func (s *Server) releaseLease(c *tcall) {
	req, ok := s.leaseID(c, false)
	if !ok {
		return
	}
	render := endAnswer("released")
	l, err := s.cfg.Store.ReleaseLease(c.r.Context(), c.r.PathValue("id"), c.owner, req.LeaseID, c.nowMs, c.idem(render))
	c.reply(l, err, render)
}

func (s *Server) revokeLease(c *tcall) {
	if len(bytes.TrimSpace(c.body)) != 0 {
		s.badRequest(c.w, "DELETE takes no body")
		return
	}
	render := endAnswer("revoked")
	l, err := s.cfg.Store.RevokeLease(c.r.Context(), c.r.PathValue("id"), c.owner, c.nowMs, c.idem(render))
	c.reply(l, err, render)
}

type putTaskReq struct {
	LeaseID string          `json:"leaseId"`
	State   json.RawMessage `json:"state"`
}

// parseIfMatch reads If-Match: "<revision>" (a strong entity tag of a
// positive decimal revision, nothing else).
func parseIfMatch(h string) (int64, bool) {
	if len(h) < 3 || h[0] != '"' || h[len(h)-1] != '"' {
		return 0, false
	}
	d := h[1 : len(h)-1]
	if d == "" || len(d) > 18 || d[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(d, 10, 64)
	return n, err == nil
}

func (s *Server) putTask(c *tcall) {
	if _, present := c.r.Header["If-Match"]; !present {
		s.badRequest(c.w, `If-Match: "<revision>" is required: a write names the revision it replaces`)
		return
	}
	rev, ok := parseIfMatch(c.ifMatch)
	if !ok {
		s.badRequest(c.w, `If-Match must be one revision in double quotes, e.g. "3"`)
		return
	}
	var req putTaskReq
	if !c.decode(&req) {
		return
	}
	if req.LeaseID == "" || len(req.LeaseID) > 128 {
		s.badRequest(c.w, "leaseId is required")
		return
	}
	st, ok := c.state(req.State)
	if !ok {
		return
	}
	render := func(res any) (int, []byte) { return answer(http.StatusOK, map[string]any{"revision": res.(int64)}) }
	n, err := s.cfg.Store.UpdateTask(c.r.Context(), UpdateRequest{TaskID: c.r.PathValue("id"), Owner: c.owner,
		LeaseID: req.LeaseID, IfRevision: rev, State: st, NowMs: c.nowMs}, c.idem(render))
	c.reply(n, err, render)
}

// send writes an answer rendered by answer.
func (c *tcall) send(status int, body []byte) { writeRaw(c.w, status, body) }

// reply answers a store write: its error as fromStore does, else its
// result v as render renders it (the answer an idempotent replay repeats).
func (c *tcall) reply(v any, err error, render func(any) (int, []byte)) {
	if err != nil {
		c.fromStore(err)
		return
	}
	c.send(render(v))
}
