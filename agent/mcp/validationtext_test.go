package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pling-go/pling/runtime"
)

// A pattern violation reaches the model with the
// pattern and the parameter's own hint, both quoted as the page's words,
// under INVALID_PARAMS and its next step; nothing ran.
func TestPatternViolationTextNamesTheHint(t *testing.T) {
	declare := declarer(t)
	rt := runtime.New(runtime.WithExpose("*"))
	ran := false
	declare(rt.DeclareAction(runtime.Action{ID: "payment.confirm", Title: "Confirm the payment",
		Params: map[string]runtime.Param{"code": {Type: "string", Required: true, Pattern: "^[0-9]{6}$", Description: "The bank's code: six digits"}},
		Run:    func(context.Context, *runtime.Call) (any, error) { ran = true; return nil, nil }}))
	s := connectRuntime(t, rt)
	got, txt := callText(t, s, "payment_confirm", map[string]any{"code": "12ab"})
	for _, want := range []string{"INVALID_PARAMS: ", `"path":"/code"`, `does not match the pattern \"^[0-9]{6}$\"`, `the parameter says \"The bank's code: six digits\"`} {
		if !got.IsError || !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
	if ran {
		t.Error("the handler ran on an invalid input")
	}
}
