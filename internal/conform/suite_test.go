package conform_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/conform"
)

const suiteDir = "../../e2e/conformance"

// TestSuiteNative runs the whole conformance suite on the native host, one
// subtest per case.
func TestSuiteNative(t *testing.T) {
	cases, err := conform.LoadDirStrict(suiteDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no conformance cases")
	}
	produced := map[string]bool{}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			r := conform.Run(context.Background(), conform.Native{}, c)
			if !r.Pass {
				t.Errorf("%s (%s)\n%s", c.File, c.Rule, strings.Join(r.Failures, "\n"))
			}
			for _, resp := range r.Responses {
				for _, code := range codesIn(resp) {
					produced[code] = true
				}
			}
		})
	}
	// Every code of the two wire namespaces is produced by some case.
	for _, ns := range []perr.Namespace{perr.Surface, perr.Action} {
		for _, code := range perr.Codes(ns) {
			if !produced[string(code)] {
				t.Errorf("no conformance case produces %s (%v)", code, ns)
			}
		}
	}
}

// TestSuiteDeterministic runs every case twice and requires identical
// response bytes: equal pages give equal bytes.
func TestSuiteDeterministic(t *testing.T) {
	cases, err := conform.LoadDirStrict(suiteDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		a := conform.Run(context.Background(), conform.Native{}, c)
		b := conform.Run(context.Background(), conform.Native{}, c)
		for i := range a.Responses {
			if !bytes.Equal(a.Responses[i], b.Responses[i]) {
				t.Errorf("%s: step %d differs between two runs:\n%s\n%s", c.Name, i+1, a.Responses[i], b.Responses[i])
			}
		}
	}
}

// codesIn returns error.code, result.error.code and the codes of
// result.context.unavailable of a response.
func codesIn(resp []byte) []string {
	if resp == nil {
		return nil
	}
	var r struct {
		Error *struct {
			Code string `json:"code"`
		} `json:"error"`
		Result *struct {
			Error *struct {
				Code string `json:"code"`
			} `json:"error"`
			Context *struct {
				Unavailable []struct {
					Code string `json:"code"`
				} `json:"unavailable"`
			} `json:"context"`
		} `json:"result"`
	}
	if json.Unmarshal(resp, &r) != nil {
		return nil
	}
	var out []string
	if r.Error != nil {
		out = append(out, r.Error.Code)
	}
	if r.Result != nil && r.Result.Error != nil {
		out = append(out, r.Result.Error.Code)
	}
	if r.Result != nil && r.Result.Context != nil {
		for _, u := range r.Result.Context.Unavailable {
			if u.Code != "" {
				out = append(out, u.Code)
			}
		}
	}
	return out
}
