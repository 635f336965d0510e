package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pling-go/pling/internal/testing/pgtest"
)

// procReq sends one request to a process with headers; an error is a
// transport error (the process gave no answer).
func procReq(cl *http.Client, url, method, path, tok string, hdr map[string]string, body string) (int, http.Header, []byte, error) {
	req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := cl.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, nil, nil, err
	}
	return res.StatusCode, res.Header, raw, nil
}

// TestAuthorityWritesSurviveSIGKILL: writers with Idempotency-Keys write
// one task through three pling authority processes on one PostgreSQL;
// one process is SIGKILLed mid-load. A write whose process died unanswered
// is sent again, with the same key and the same If-Match, to another
// process. Afterwards every acknowledged write is in the task's state
// exactly once, nothing else is, the revision counts them, and the two
// survivors kept acknowledging writes after the kill.
func TestAuthorityWritesSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("three processes on PostgreSQL; -short skips it")
	}
	dsn := pgtest.DSN(t)
	const op = "op-secret-writes"
	procs := []*authorityProc{startAuthorityProc(t, dsn, op), startAuthorityProc(t, dsn, op), startAuthorityProc(t, dsn, op)}
	a := procs[0]
	cr := a.must("POST", "/v1/delegations", "", `{"audience":"https://shop.example","scope":["orders.read"],"ttlSeconds":600,"agent":"w"}`, 201)
	procs[1].must("POST", "/v1/delegations/"+cr["id"].(string)+"/approve", op, `{"subject":"alice"}`, 200)
	tok := procs[2].must("POST", "/v1/delegations/"+cr["id"].(string)+"/token", "", `{"pollSecret":"`+cr["pollSecret"].(string)+`"}`, 200)["token"].(string)
	procs[1].must("POST", "/v1/tasks", tok, `{"taskId":"k","state":{"m":[]}}`, 201)
	lid := procs[2].must("POST", "/v1/tasks/k/lease", tok, `{"holder":"writers","ttlSeconds":600}`, 200)["leaseId"].(string)

	const writers = 8
	cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: writers}, Timeout: 20 * time.Second}
	defer cl.CloseIdleConnections()
	stop := time.Now().Add(4 * time.Second)
	var killedAt atomic.Int64 // unix ns; 0 before the kill
	var mu sync.Mutex
	acked := map[string]int{} // marker → acknowledgements
	type sent struct {
		hdr  map[string]string
		body string
		ans  []byte
	}
	var ackedReqs []sent
	var afterKill, resent, replayed, conflicts int
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := w // the process this writer sends to next; it moves on after each call
			send := func(method, path string, hdr map[string]string, body string) (int, http.Header, []byte, bool) {
				for tries := 0; tries < 2*len(procs); tries++ {
					p := procs[next%len(procs)]
					next++
					st, h, raw, err := procReq(cl, p.URL, method, path, tok, hdr, body)
					if err == nil {
						return st, h, raw, true
					}
					if killedAt.Load() == 0 || p != a {
						t.Errorf("writer %d: %s %s on a live process: %v", w, method, path, err)
						return 0, nil, nil, false
					}
					if method == "PUT" {
						mu.Lock()
						resent++
						mu.Unlock()
					}
				}
				t.Errorf("writer %d: no process answered %s %s", w, method, path)
				return 0, nil, nil, false
			}
			for n := 0; time.Now().Before(stop); n++ {
				st, h, raw, ok := send("GET", "/v1/tasks/k", nil, "")
				if !ok {
					return
				}
				var cur struct {
					State struct {
						M []string `json:"m"`
					} `json:"state"`
				}
				if st != 200 || json.Unmarshal(raw, &cur) != nil {
					t.Errorf("writer %d: read: %d %s", w, st, raw)
					return
				}
				marker := fmt.Sprintf("w%d.%d", w, n)
				state, _ := json.Marshal(map[string]any{"leaseId": lid, "state": map[string]any{"m": append(cur.State.M, marker)}})
				hdr := map[string]string{"If-Match": h.Get("ETag"), "Idempotency-Key": "key-" + marker}
				st, h, raw, ok = send("PUT", "/v1/tasks/k", hdr, string(state))
				if !ok {
					return
				}
				mu.Lock()
				switch {
				case st == 200:
					acked[marker]++
					ackedReqs = append(ackedReqs, sent{hdr, string(state), raw})
					if h.Get("Idempotent-Replayed") == "true" {
						replayed++
					}
					if k := killedAt.Load(); k != 0 && time.Now().UnixNano() > k {
						afterKill++
					}
				case st == 409 && strings.Contains(string(raw), `"CONTINUITY_REVISION_CONFLICT"`):
					conflicts++
				default:
					t.Errorf("writer %d: write: %d %s", w, st, raw)
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	killedAt.Store(time.Now().UnixNano())
	a.Kill()
	wg.Wait()

	var cur struct {
		Revision int64 `json:"revision"`
		State    struct {
			M []string `json:"m"`
		} `json:"state"`
	}
	st, _, raw, err := procReq(cl, procs[1].URL, "GET", "/v1/tasks/k", tok, nil, "")
	if err != nil || st != 200 || json.Unmarshal(raw, &cur) != nil {
		t.Fatalf("final read: %d %s %v", st, raw, err)
	}
	inState := map[string]int{}
	for _, m := range cur.State.M {
		inState[m]++
	}
	for m, n := range acked {
		if n != 1 || inState[m] != 1 {
			t.Errorf("acknowledged write %s: acknowledged %d times, %d times in the state; want once and once", m, n, inState[m])
		}
	}
	for m, n := range inState {
		if acked[m] == 0 {
			t.Errorf("write %s is in the state %d times but was never acknowledged", m, n)
		}
	}
	if cur.Revision != int64(1+len(acked)) {
		t.Errorf("revision %d after %d acknowledged writes, want %d", cur.Revision, len(acked), 1+len(acked))
	}
	if afterKill == 0 {
		t.Error("no write was acknowledged after the kill: the survivors did not keep serving")
	}
	if resent == 0 {
		t.Error("no write met the killed process: the test proved nothing about retries")
	}
	// A retry whose first answer was lost (applied, then the process
	// died): sent again to a survivor, it is answered as first, and
	// applied no second time.
	for i, r := range ackedReqs[max(0, len(ackedReqs)-10):] {
		st, h, raw, err := procReq(cl, procs[1+i%2].URL, "PUT", "/v1/tasks/k", tok, r.hdr, r.body)
		if err != nil || st != 200 || string(raw) != string(r.ans) || h.Get("Idempotent-Replayed") != "true" {
			t.Errorf("resent %s: %d %s (replayed %q) %v, want the first answer %s replayed", r.hdr["Idempotency-Key"], st, raw, h.Get("Idempotent-Replayed"), err, r.ans)
		}
	}
	if st, _, raw, _ := procReq(cl, procs[2].URL, "GET", "/v1/tasks/k", tok, nil, ""); st != 200 || !strings.Contains(string(raw), fmt.Sprintf(`"revision":%d`, cur.Revision)) {
		t.Errorf("after the resends: %d %s, want revision %d still", st, raw, cur.Revision)
	}
	procs[2].must("GET", "/readyz", "", "", 200)
	t.Logf("%d writes acknowledged (%d after the kill, %d answered as replays), %d resent after the kill, %d conflicts",
		len(acked), afterKill, replayed, resent, conflicts)
}
