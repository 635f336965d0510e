package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/authority"
)

// An agent asks the site's authority for a session, shows its person the
// link and the code, and collects the token once the person approved
// (here the site's backend approves at once, narrowing the scope).
func ExampleRequestDelegation() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "pling-example")
	defer os.RemoveAll(dir)
	st, _ := authority.OpenSQLite(ctx, filepath.Join(dir, "a.db"))
	defer st.Close()
	srv, _ := authority.NewServer(ctx, authority.Config{Store: st,
		Audiences:    map[string][]string{"https://shop.example": {"*"}},
		OperatorKeys: []string{"op-key"}, VerificationURI: "https://shop.example/pling/consent"})
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	p, err := agent.RequestDelegation(ctx, hs.URL, agent.DelegationRequest{Audience: "https://shop.example",
		Scope: []string{"cart.*", "checkout"}, TTL: time.Hour, Agent: "example agent"},
		agent.WithPollSleep(func(context.Context, time.Duration) error { return nil })) // no waiting in an example
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("show the person:", p.VerificationURI, "and a code of", len(p.UserCode), "characters")

	// The person approves cart.* only, on the authority's consent screen.
	req, _ := http.NewRequest("POST", hs.URL+"/v1/delegations/"+p.ID+"/approve", strings.NewReader(`{"subject":"alice","scope":["cart.*"]}`))
	req.Header.Set("Authorization", "Bearer op-key")
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}

	d, err := p.Wait(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("scope:", d.Scope, "token:", strings.HasPrefix(d.Token, "pl1."))
	// Output:
	// show the person: https://shop.example/pling/consent and a code of 9 characters
	// scope: [cart.*] token: true
}
