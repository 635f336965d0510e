package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/authority"
	"github.com/pling-go/pling/gateway"
	"github.com/pling-go/pling/internal/testing/authoritytest"
)

// TestGatewayStartsOnABigFeed: a gateway starting against a store whose
// feed holds 200,001 revocations past their session's expiry and 100,000
// live ones reads the live ones only, in bounded pages, and accepts a
// fresh token once it has. The feed's first page holds at most
// FeedPageSize entries, none expired, and its cursor is past every
// expired entry before the first live one; walking the feed yields the
// 100,000 live entries exactly. The time to the first accepted token is
// logged (the acceptance figure is 5 s; measured, not asserted here).
func TestGatewayStartsOnABigFeed(t *testing.T) {
	const expired, live = 200_001, 100_000
	ctx := context.Background()
	st, path := authoritytest.SQLite(t)
	fillFeed(t, path, expired, live)

	a := authoritytest.Start(t, authority.Config{Store: st, OperatorKeys: []string{operator},
		Audiences: map[string][]string{siteOrigin: {"*"}}}, nil)

	first := feedPage(t, a.URL, "")
	if n := len(first.Revoked); n == 0 || n > authority.FeedPageSize {
		t.Fatalf("the first page holds %d entries, want 1–%d", n, authority.FeedPageSize)
	}
	now := time.Now()
	for _, e := range first.Revoked {
		if exp, err := time.Parse(time.RFC3339Nano, e.ExpiresAt); err != nil || exp.Before(now) {
			t.Fatalf("the first page serves an expired entry: %+v", e)
		}
	}
	if c, _ := strconv.Atoi(first.Cursor); c <= expired {
		t.Fatalf("the first page's cursor %d is not past the %d expired entries", c, expired)
	}
	total, pages := len(first.Revoked), 1
	for cur := first.Cursor; ; pages++ {
		p := feedPage(t, a.URL, cur)
		if len(p.Revoked) == 0 {
			break
		}
		total, cur = total+len(p.Revoked), p.Cursor
	}
	if total != live {
		t.Fatalf("the feed serves %d entries in %d pages, want the %d live ones", total, pages, live)
	}

	tok := authoritytest.DeviceGrant(t, a.URL, operator, authoritytest.Grant{Audience: siteOrigin, Scope: []string{"gateway:*"}, Agent: "a"}).Token
	began := time.Now()
	ta, err := gateway.NewTokenAuth(a.URL, []string{siteOrigin}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = ta.Start(ctx) // may return before the feed is read; the gateway's /readyz says what it waits for
	t.Cleanup(ta.Close)
	e := start(t, answer("hi"), func(c *gateway.Config) { c.Tokens = ta })
	var waiting []string
	for {
		if _, err := e.client(tok).Chat.Completions.New(ctx, say("hi")); err == nil {
			break
		}
		if why := ta.Waiting(); why != "" && (len(waiting) == 0 || waiting[len(waiting)-1] != why) {
			waiting = append(waiting, why)
		}
		if time.Since(began) > time.Minute {
			t.Fatalf("no token accepted a minute after the start; waiting for %q", waiting)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("a fresh token accepted %v after the gateway started (%d expired, %d live revocations; /readyz said %q)",
		time.Since(began).Round(time.Millisecond), expired, live, waiting)
	for _, w := range waiting {
		if w == "authority keys not fetched" && len(waiting) > 1 {
			continue
		}
		if w != "authority keys not fetched" && !strings.Contains(w, "revocation feed") {
			t.Errorf("/readyz said %q while the feed was read", w)
		}
	}
}

// fillFeed appends expired revocations, then live ones, to the feed of
// the SQLite store at path, in one transaction.
func fillFeed(t *testing.T, path string, expired, live int) {
	t.Helper()
	db := authoritytest.SQLiteFile(t, path)
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	ins, err := tx.Prepare(`INSERT INTO revocations (session_id, at_ms, expires_ms) VALUES (?, ?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	for i := range expired + live {
		exp := now - 3_600_000
		if i >= expired {
			exp = now + 3_600_000
		}
		if _, err := ins.Exec(fmt.Sprintf("s%022d", i), exp-60_000, exp); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

type feedAnswer struct {
	Cursor  string `json:"cursor"`
	Revoked []struct {
		SessionID string `json:"sessionId"`
		ExpiresAt string `json:"expiresAt"`
	} `json:"revoked"`
}

func feedPage(t *testing.T, base, after string) feedAnswer {
	t.Helper()
	u := base + "/v1/revocations"
	if after != "" {
		u += "?after=" + after
	}
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", u, res.StatusCode, b)
	}
	if len(b) > 1<<20 {
		t.Fatalf("a page of %d bytes, past a follower's 1 MiB bound", len(b))
	}
	var a feedAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	return a
}
