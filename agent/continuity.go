package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	perr "github.com/pling-go/pling/errors"
)

// TaskClient is a client of the authority's continuity service
// (docs/authority.md "Continuity"): durable tasks whose JSON state an agent
// carries across pages, reloads and agents. It authenticates with the
// agent's delegation token, sends If-Match on every update, and gives
// every write an Idempotency-Key of its own, which it reuses when it
// resends the write after a lost answer or a store that was briefly
// unavailable — so a resent write is applied at most once.
type TaskClient struct {
	base  string
	token string
	// HTTP is the HTTP client (default: one with a 30s timeout).
	HTTP *http.Client
	// Retries is how many times a request whose answer was lost, or that
	// met CONTINUITY_STORAGE_UNAVAILABLE, is resent with the same
	// Idempotency-Key (default 2).
	Retries int
	// Backoff is the wait before the first resend, doubling after (default 200ms).
	Backoff time.Duration
}

// NewTaskClient returns a client of the authority at baseURL (e.g.
// "http://127.0.0.1:8090") acting with token, a pl1 delegation token.
func NewTaskClient(baseURL, token string) *TaskClient {
	return &TaskClient{base: strings.TrimRight(baseURL, "/"), token: token,
		HTTP: &http.Client{Timeout: 30 * time.Second}, Retries: 2, Backoff: 200 * time.Millisecond}
}

// Task is a task as read.
type Task struct {
	ID       string          `json:"taskId"`
	Revision int64           `json:"revision"`
	State    json.RawMessage `json:"state"`
	// Lease is the live lease (its holder, never its id), nil when none.
	Lease *TaskLease `json:"lease"`
	// Terminal says the state's status is done or cancelled: the task
	// accepts no more writes.
	Terminal  bool      `json:"terminal"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Decode unmarshals the task's state into v.
func (t *Task) Decode(v any) error { return json.Unmarshal(t.State, v) }

// TaskLease is a lease; ID is set for the caller's own lease only.
type TaskLease struct {
	ID        string    `json:"leaseId,omitempty"`
	Holder    string    `json:"holder"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// TaskError is a refusal of the continuity service, with its code from
// the Continuity registry. errors.Is matches a *perr.Error of the same
// code: errors.Is(err, perr.New(perr.ContinuityLeaseHeld, "", nil)).
type TaskError struct {
	Status  int
	Code    perr.Code
	Message string
	// RetryAfterMs is CONTINUITY_LEASE_HELD's hint: when the lease may be
	// free.
	RetryAfterMs int64
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("pling: task service: %s: %s (HTTP %d)", e.Code, e.Message, e.Status)
}

// Is matches a *perr.Error or a *TaskError with the same code.
func (e *TaskError) Is(target error) bool { return isCode(e, target) }

// As fills a **perr.Error with the registry value of the refusal.
func (e *TaskError) As(target any) bool {
	return asRegistry(target, func() *perr.Error { return perr.New(e.Code, e.Message, nil).WithRetryAfter(e.RetryAfterMs) })
}

func (e *TaskError) code() perr.Code { return e.Code }

// Recovery is the registry's recovery hint for the code.
func (e *TaskError) Recovery() perr.Recovery { return recoveryOf(e.Code) }

func newIdempotencyKey() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return "agent-" + base64.RawURLEncoding.EncodeToString(b)
}

// do sends one request, resending a write with the same Idempotency-Key
// when its answer is lost or the store was unavailable.
func (c *TaskClient) do(ctx context.Context, method, path string, hdr map[string]string, body, out any) error {
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return err
		}
	}
	write := method != http.MethodGet
	key := ""
	if write {
		key = newIdempotencyKey()
	}
	wait := c.Backoff
	for attempt := 0; ; attempt++ {
		err := c.once(ctx, method, path, hdr, key, data, out)
		var te *TaskError
		retriable := err != nil && (!errors.As(err, &te) || te.Code == perr.ContinuityStorageUnavailable ||
			te.Code == perr.ContinuityStorageTimeout)
		if !retriable || attempt >= c.Retries || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func (c *TaskClient) once(ctx context.Context, method, path string, hdr map[string]string, key string, data []byte, out any) error {
	var rd io.Reader
	if data != nil {
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if data != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		var e struct {
			Error struct {
				Code         string `json:"code"`
				Message      string `json:"message"`
				RetryAfterMs int64  `json:"retryAfterMs"`
			} `json:"error"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Error.Code == "" {
			return fmt.Errorf("pling: task service: HTTP %d without an error body", res.StatusCode)
		}
		return &TaskError{Status: res.StatusCode, Code: perr.Code(e.Error.Code), Message: e.Error.Message, RetryAfterMs: e.Error.RetryAfterMs}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

func taskPath(id string) string { return "/v1/tasks/" + url.PathEscape(id) }

// CreateTask creates a task with state (a JSON object); id may be empty
// for one the service picks. It returns the task's id and revision (1).
func (c *TaskClient) CreateTask(ctx context.Context, id string, state any) (string, int64, error) {
	body := map[string]any{"state": state}
	if id != "" {
		body["taskId"] = id
	}
	var out struct {
		TaskID   string `json:"taskId"`
		Revision int64  `json:"revision"`
	}
	err := c.do(ctx, http.MethodPost, "/v1/tasks", nil, body, &out)
	return out.TaskID, out.Revision, err
}

// Task reads a task.
func (c *TaskClient) Task(ctx context.Context, id string) (*Task, error) {
	var t Task
	if err := c.do(ctx, http.MethodGet, taskPath(id), nil, nil, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// AcquireLease asks for the task's lease for ttl (whole seconds). A
// holder that holds the live lease already gets it back.
func (c *TaskClient) AcquireLease(ctx context.Context, id, holder string, ttl time.Duration) (TaskLease, error) {
	var l TaskLease
	err := c.do(ctx, http.MethodPost, taskPath(id)+"/lease", nil,
		map[string]any{"holder": holder, "ttlSeconds": int64((ttl + time.Second - 1) / time.Second)}, &l)
	return l, err
}

// Renew extends a live lease by its TTL.
func (c *TaskClient) Renew(ctx context.Context, id, leaseID string) (TaskLease, error) {
	var l TaskLease
	err := c.do(ctx, http.MethodPost, taskPath(id)+"/lease/renew", nil, map[string]any{"leaseId": leaseID}, &l)
	return l, err
}

// Release ends a live lease.
func (c *TaskClient) Release(ctx context.Context, id, leaseID string) error {
	return c.do(ctx, http.MethodPost, taskPath(id)+"/lease/release", nil, map[string]any{"leaseId": leaseID}, nil)
}

// RevokeLease ends the task's live lease whoever holds it (the owner's
// override).
func (c *TaskClient) RevokeLease(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, taskPath(id)+"/lease", nil, nil, nil)
}

// Update writes state over revision (sent as If-Match) under leaseID and
// returns the new revision. A task changed since revision answers
// CONTINUITY_REVISION_CONFLICT: read it again, merge, retry.
func (c *TaskClient) Update(ctx context.Context, id, leaseID string, revision int64, state any) (int64, error) {
	var out struct {
		Revision int64 `json:"revision"`
	}
	err := c.do(ctx, http.MethodPut, taskPath(id), map[string]string{"If-Match": `"` + strconv.FormatInt(revision, 10) + `"`},
		map[string]any{"leaseId": leaseID, "state": state}, &out)
	return out.Revision, err
}
