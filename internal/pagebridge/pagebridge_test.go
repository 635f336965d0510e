package pagebridge_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	perr "github.com/pling-go/pling/errors"
	"github.com/pling-go/pling/internal/pagebridge"
	"github.com/pling-go/pling/internal/wire"
	"github.com/pling-go/pling/runtime"
)

// TestRegistered: package runtime registers every function the bridge
// calls, with the types the module asserts them to; one left out (or
// registered with another signature) panics here instead of in a page.
func TestRegistered(t *testing.T) {
	codeOf := func(err error) perr.Code {
		var pe *perr.Error
		if !errors.As(err, &pe) {
			return ""
		}
		return pe.Code()
	}
	var warned []string
	rt := runtime.New(runtime.WithExpose("order.*"), pagebridge.WithAuthorWarning[runtime.Option](func(m string) { warned = append(warned, m) }))
	ctx := context.Background()
	t.Run("Refuse", func(t *testing.T) {
		if got := string(pagebridge.Refuse(rt, wire.ReasonTooLarge)); !strings.Contains(got, `"reason":"`+wire.ReasonTooLarge+`"`) {
			t.Errorf("Refuse = %s, want the reason", got)
		}
	})
	t.Run("SiteExposes", func(t *testing.T) {
		if !pagebridge.SiteExposes(rt, runtime.Action{ID: "order.cancel"}) || pagebridge.SiteExposes(rt, runtime.Action{ID: "account.delete"}) {
			t.Error("SiteExposes does not follow the site allowlist")
		}
	})
	t.Run("Lint and MarkupPlaces", func(t *testing.T) {
		if got := pagebridge.Lint(rt, ctx); len(got) != 0 {
			t.Errorf("Lint = %q, want nothing declared, nothing wrong", got)
		}
		if got := pagebridge.MarkupPlaces(rt); len(got) != 0 {
			t.Errorf("MarkupPlaces = %v, want none", got)
		}
	})
	t.Run("CheckFailed", func(t *testing.T) {
		av := pagebridge.CheckFailed[runtime.Availability](errors.New("boom"))
		if av.OK || !strings.Contains(av.Reason, "boom") {
			t.Errorf("CheckFailed = %+v, want unavailable with the page's text", av)
		}
	})
	t.Run("PageFailure", func(t *testing.T) {
		w, err := pagebridge.PageFailure("PERMISSION_DENIED", "not yours", nil)
		if w != "" || codeOf(err) != perr.PermissionDenied {
			t.Errorf("PageFailure = %q, %v; want no warning, PERMISSION_DENIED", w, err)
		}
	})
	t.Run("FormRefused", func(t *testing.T) {
		err := pagebridge.FormRefused([]pagebridge.FormField{{Name: "ref", Message: "too short"}})
		if diff := cmp.Diff(perr.InvalidParams, codeOf(err)); diff != "" {
			t.Errorf("FormRefused code (-want +got):\n%s", diff)
		}
	})
	if len(warned) != 0 {
		t.Errorf("author warnings %q, want none", warned)
	}
}

// TestKeyWord: the word the runtime's lint and pling describe use for
// what identifies a declaration of each kind.
func TestKeyWord(t *testing.T) {
	for kind, want := range map[string]string{"action": "id", "region": "id", "state": "key", "guide": "target"} {
		if got := pagebridge.KeyWord(kind); got != want {
			t.Errorf("KeyWord(%q) = %q, want %q", kind, got, want)
		}
	}
}
