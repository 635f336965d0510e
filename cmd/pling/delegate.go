package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/pling-go/pling/agent"
	perr "github.com/pling-go/pling/errors"
)

func init() {
	register(command{"delegate", "ask a site's authority for a session and store its token", runDelegate})
}

// authorityEnv names the authority when --authority is not given.
const authorityEnv = "PLING_AUTHORITY"

func runDelegate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := newFlags("delegate", stderr,
		"Usage: pling delegate URL --scope PATTERN[,…] [--authority URL] [--ttl D] [--token-file F] [--agent NAME] [--json] [--print-token]",
		"Asks the authority for a session on URL's page origin (docs/authority.md), prints the user code",
		"and the link where a person consents, waits for the decision and stores the token in a file only",
		"you can read (default: the token directory, where describe, invoke and mcp find it for that origin).",
		"The authority is --authority, else $"+authorityEnv+".",
		"Exit status: 0 approved and stored, 1 denied, expired or failed, 2 usage.",
	)
	scope := fl.String("scope", "", "the capability patterns to ask for, comma separated (the person may narrow them)")
	authURL := fl.String("authority", "", "the authority's base URL (default $"+authorityEnv+")")
	ttl := fl.Duration("ttl", time.Hour, "how long the token should live (the authority caps it)")
	tokenFile := fl.String("token-file", "", "store the token here (default: the token directory's file for the origin)")
	agentName := fl.String("agent", defaultAgentName(), "the name the person sees on the consent screen")
	asJSON := fl.Bool("json", false, "print the pending delegation, then the session, as JSON lines on stdout")
	printToken := fl.Bool("print-token", false, "also print the token itself on stdout (it is a secret)")
	pos, exit, ok := parseFlags(fl, args)
	if !ok {
		return exit
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "pling delegate: "+format+"\n", a...)
		return 2
	}
	if len(pos) != 1 {
		return usageErr("want one page URL, got %d arguments", len(pos))
	}
	origin, err := pageOrigin(pos[0])
	if err != nil {
		return usageErr("%v", err)
	}
	patterns := splitPatterns(*scope)
	if len(patterns) == 0 {
		return usageErr("--scope is required: the capability patterns to ask for, e.g. --scope 'cart.*,orders.view'")
	}
	if *authURL == "" {
		*authURL = os.Getenv(authorityEnv)
	}
	if *authURL == "" {
		return usageErr("no authority: give --authority URL (the site's pling authority) or set $%s", authorityEnv)
	}
	if _, err := pageOrigin(*authURL); err != nil {
		return usageErr("--authority: %v", err)
	}
	if *ttl < time.Second {
		return usageErr("--ttl must be at least 1s, not %v", *ttl)
	}
	if strings.TrimSpace(*agentName) == "" {
		return usageErr("--agent must not be empty")
	}
	path := *tokenFile
	if path == "" {
		if path, err = tokenFileFor(origin); err != nil {
			return usageErr("%v", err)
		}
	}

	p, err := requestDelegation(ctx, *authURL, agent.DelegationRequest{Audience: origin, Scope: patterns, TTL: *ttl, Agent: *agentName})
	if err != nil {
		fmt.Fprintf(stderr, "pling delegate: %v\n", err)
		return 1
	}
	link := completeURI(p.VerificationURI, p.UserCode)
	if *asJSON {
		writeJSONLine(stdout, map[string]any{"id": p.ID, "userCode": p.UserCode, "verificationUri": p.VerificationURI,
			"verificationUriComplete": link, "expiresAt": p.ExpiresAt.UTC().Format(time.RFC3339)})
	}
	fmt.Fprintf(stderr, "pling delegate: %s asks for %s on %s.\n", *agentName, strings.Join(patterns, ", "), origin)
	if link != "" {
		fmt.Fprintf(stderr, "  Open %s\n  and check that it shows the code %s", link, p.UserCode)
	} else {
		fmt.Fprintf(stderr, "  The authority names no consent page: ask the site's operator to approve delegation %s (code %s)", p.ID, p.UserCode)
	}
	fmt.Fprintf(stderr, " before %s.\n  Waiting for the decision…\n", p.ExpiresAt.Local().Format("15:04:05"))

	d, err := p.Wait(ctx)
	if err != nil {
		var de *agent.DelegationError
		switch {
		case errors.As(err, &de) && de.Code == perr.DelegationRevoked:
			fmt.Fprintf(stderr, "pling delegate: denied (%s)\n", de.Code)
		case errors.As(err, &de) && de.Code == perr.DelegationExpired:
			fmt.Fprintf(stderr, "pling delegate: nobody decided in time (%s)\n", de.Code)
		default:
			fmt.Fprintf(stderr, "pling delegate: %v\n", err)
		}
		if *asJSON && de != nil {
			writeJSONLine(stdout, map[string]any{"error": map[string]any{"code": de.Code, "message": de.Message}})
		}
		return 1
	}
	if err := writeTokenFile(path, d.Token); err != nil {
		fmt.Fprintf(stderr, "pling delegate: storing the token: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "pling delegate: approved: scope %s, until %s; token stored in %s\n",
		strings.Join(d.Scope, ", "), d.ExpiresAt.Local().Format(time.DateTime), path)
	if *asJSON {
		out := map[string]any{"sessionId": d.SessionID, "scope": d.Scope, "expiresAt": d.ExpiresAt.UTC().Format(time.RFC3339), "tokenFile": path}
		if *printToken {
			out["token"] = d.Token
		}
		writeJSONLine(stdout, out)
	} else if *printToken {
		fmt.Fprintln(stdout, d.Token)
	}
	return 0
}

// splitPatterns splits a comma (or space) separated pattern list.
func splitPatterns(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

// completeURI is the verification URI with the user code in it
// (RFC 8628's verification_uri_complete), so the person need not type it.
func completeURI(uri, code string) string {
	if uri == "" {
		return ""
	}
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	q := u.Query()
	q.Set("code", code)
	u.RawQuery = q.Encode()
	return u.String()
}

// defaultAgentName is "pling delegate (USER@HOST)".
func defaultAgentName() string {
	host, _ := os.Hostname()
	user := os.Getenv("USER")
	if user == "" {
		user = os.Getenv("USERNAME")
	}
	who := strings.Trim(user+"@"+host, "@")
	if who == "" {
		return "pling delegate"
	}
	return "pling delegate (" + who + ")"
}

// writeJSONLine prints v as one line of JSON without HTML escaping.
func writeJSONLine(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// startupGrace is how long pling delegate retries an authority that does
// not answer at all: one started a moment ago in the same script
// ("pling authority & pling delegate …") is still opening its store.
const startupGrace = 5 * time.Second

// requestDelegation is agent.RequestDelegation, retried while the
// authority cannot be reached within startupGrace. An answer, even a
// refusal, is final.
func requestDelegation(ctx context.Context, authURL string, req agent.DelegationRequest) (*agent.PendingDelegation, error) {
	deadline := time.Now().Add(startupGrace)
	for {
		p, err := agent.RequestDelegation(ctx, authURL, req)
		var de *agent.DelegationError
		if err == nil || errors.As(err, &de) || ctx.Err() != nil || time.Now().After(deadline) {
			return p, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
