package errors

import (
	"regexp"
	"strings"
	"testing"
)

// credentialRE is the RE2 expression the credential scanner is, kept here
// to hold the scanner to it.
var credentialRE = regexp.MustCompile(
	`(?i)\b(?:bearer|basic|digest)\s+[A-Za-z0-9._~+/=-]{8,}` +
		`|\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*` +
		`|\bpl1\.[A-Za-z0-9_-]{1,64}\.[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*)?` +
		`|\b(?:sk|pk|rk)[-_][A-Za-z0-9_-]{12,}` +
		`|\bgh[pousr]_[A-Za-z0-9]{20,}` +
		`|\bAKIA[0-9A-Z]{16}\b` +
		`|(?i)\b(?:access_token|refresh_token|id_token|token|password|passwd|api_key|apikey|secret|client_secret|sig|signature)=[^&\s"']+`)

var credentialSeeds = []string{
	"Authorization: Bearer abcdefgh12345678",
	"basic  dXNlcjpwYXNz and digest\tabc",
	"token eyJhbGciOi.eyJzdWIiOiJ4.sig-nat_ure rest",
	"pl1.k1.abcdefgh12345678.sig pl1.cart.add pl1." + strings.Repeat("a", 65) + ".abcdefghij",
	"sk-abcdefghijkl1 pk_abcdefghijklm rk-short",
	"ghp_abcdefghijklmnopqrstu GHS_ABCDEFGHIJKLMNOPQRST1",
	"AKIAABCDEFGHIJKLMNOP AKIAABCDEFGHIJKLMNOPQ akiaabcdefghijklmnop!",
	"https://x/?access_token=abc&x=1 id_token=zz client_secret='q' signature=s sig=t mytoken=no",
	"ſk-abcdefghijklm Kia sk_KKKKKKKKKKKKſ ghſ_aaaaaaaaaaaaaaaaaaaa",
	"PASSWORD=\xff\xfehunter2 xbearer abcdefghijk",
	"a_sk-abcdefghijklmnop é-sk-abcdefghijklmnop",
}

// TestCredentialScanIsTheExpression: the scanner replaces what the RE2
// expression replaces, on hand-picked text.
func TestCredentialScanIsTheExpression(t *testing.T) {
	for _, s := range credentialSeeds {
		if got, want := replaceCredentials(s), credentialRE.ReplaceAllString(s, Redacted); got != want {
			t.Errorf("%q:\n got %q\nwant %q", s, got, want)
		}
		if got, want := hasCredential(s), credentialRE.MatchString(s); got != want {
			t.Errorf("%q: hasCredential %v, the expression %v", s, got, want)
		}
	}
}

// FuzzCredentialScan: on any text the scanner and the RE2 expression
// replace the same spans.
func FuzzCredentialScan(f *testing.F) {
	for _, s := range credentialSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := replaceCredentials(s), credentialRE.ReplaceAllString(s, Redacted); got != want {
			t.Fatalf("%q:\n got %q\nwant %q", s, got, want)
		}
	})
}

// TestCredentialScanLongRuns: text in which every few characters a
// candidate starts and runs to the end (eyJ-eyJ-…) is scanned once, not
// once per start: 400 KB would take minutes otherwise (80 KB in -short).
func TestCredentialScanLongRuns(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 20_000
	}
	for _, unit := range []string{"eyJ-", "sk-a-", "token=a", "bearer a-"} {
		s := strings.Repeat(unit, n)
		if got, want := hasCredential(s), credentialRE.MatchString(s); got != want {
			t.Errorf("%q…: hasCredential %v, the expression %v", unit, got, want)
		}
		_ = replaceCredentials(s)
	}
}
