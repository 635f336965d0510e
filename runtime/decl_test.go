package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pling-go/pling/schema"
)

// declEnv is a page with one of everything, so that a refused declaration
// under an existing key would show in the description if it got in.
func declEnv(t *testing.T) *tenv {
	t.Helper()
	e := newEnv(t)
	mustDeclare(t, e.rt, validAction())
	mustDeclare(t, e.rt, Action{ID: "approve", Title: "Approve", Record: &RecordRef{Kind: "order"}})
	for _, err := range []error{
		second(e.rt.DeclareState(newVar(1).state("cart.count"))),
		second(e.rt.DeclareGuide(Guide{Target: "checkout", Label: "Checkout button"})),
		second(e.rt.DeclareRegion(Region{ID: "orders", Title: "Orders"})),
		second(e.rt.DeclareRecords(Records{Kind: "order", Read: func(context.Context) ([]RecordItem, error) {
			return []RecordItem{{ID: "ord_1", Label: "#1"}}, nil
		}})),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func second[A, B any](_ A, b B) B { return b }

func validAction() Action {
	return Action{ID: "cart.add", Title: "Add to cart", Params: map[string]Param{"sku": {Type: "string", Required: true}},
		Run: func(context.Context, *Call) (any, error) { return nil, nil }}
}

func nestedItems(levels int) *Param {
	p := &Param{Type: "string"}
	for range levels {
		p = &Param{Type: "array", Items: p}
	}
	return p
}

// registrySize counts every live instance of the registry.
func registrySize(r *registry) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	n := len(r.hooks)
	for _, s := range r.actions {
		n += len(s.insts)
	}
	for _, f := range r.folds {
		n += len(f.template.insts)
		for _, s := range f.rows {
			n += len(s.insts)
		}
	}
	for _, s := range r.states {
		n += len(s.insts)
	}
	for _, s := range r.guides {
		n += len(s.insts)
	}
	for _, s := range r.regions {
		n += len(s.insts)
	}
	for _, l := range r.records {
		n += len(l)
	}
	return n
}

// checkRefused asserts a *DeclarationError of kind and field, no handle,
// and a registry that did not change.
func checkRefused(t *testing.T, e *tenv, kind, field string, declare func() (*Handle, error)) {
	t.Helper()
	before, size, gen := e.describeBytes(), registrySize(e.rt.reg), e.rt.reg.gen
	h, err := declare()
	var de *DeclarationError
	if !errors.As(err, &de) {
		t.Fatalf("error = %v (%T), want a *DeclarationError", err, err)
	}
	if h != nil {
		t.Errorf("a refused declaration returned a handle")
	}
	if de.Kind != kind || de.Field != field {
		t.Errorf("DeclarationError{Kind: %q, Field: %q} (%v), want Kind %q Field %q", de.Kind, de.Field, de, kind, field)
	}
	if de.Reason == "" {
		t.Errorf("DeclarationError has no reason")
	}
	if after := e.describeBytes(); after != before {
		t.Errorf("the description changed:\n%s", cmp.Diff(before, after))
	}
	if registrySize(e.rt.reg) != size || e.rt.reg.gen != gen {
		t.Errorf("the registry changed: size %d→%d, gen %d→%d", size, registrySize(e.rt.reg), gen, e.rt.reg.gen)
	}
}

func TestDeclareActionRefusesBadDeclarations(t *testing.T) {
	ch := make(chan int)
	tests := []struct {
		name  string
		edit  func(a *Action)
		field string
	}{
		{"empty id", func(a *Action) { a.ID = "" }, "id"},
		{"id with a space", func(a *Action) { a.ID = "cart add" }, "id"},
		{"id with @ (reserved for folded ids)", func(a *Action) { a.ID = "approve@order" }, "id"},
		{"id with : (reserved for concrete row ids)", func(a *Action) { a.ID = "approve:ord_1" }, "id"},
		{"id starting with a dot", func(a *Action) { a.ID = ".add" }, "id"},
		{"id with a slash", func(a *Action) { a.ID = "cart/add" }, "id"},
		{"id with a star", func(a *Action) { a.ID = "cart.*" }, "id"},
		{"id with a non-ASCII letter", func(a *Action) { a.ID = "café" }, "id"},
		{"id with a newline", func(a *Action) { a.ID = "cart.add\n" }, "id"},
		{"id of 129 chars", func(a *Action) { a.ID = strings.Repeat("a", 129) }, "id"},
		{"title of 201 characters", func(a *Action) { a.Title = strings.Repeat("é", 201) }, "title"},
		{"title not UTF-8", func(a *Action) { a.Title = "Add \xff" }, "title"},
		{"description of 2001 characters", func(a *Action) { a.Description = strings.Repeat("d", 2001) }, "description"},
		{"bad risk", func(a *Action) { a.Risk = "dangerous" }, "risk"},
		{"risk in capitals", func(a *Action) { a.Risk = "WRITE" }, "risk"},
		{"parameter name starting with a digit", func(a *Action) { a.Params = map[string]Param{"1qty": {}} }, "params"},
		{"parameter name with a slash", func(a *Action) { a.Params = map[string]Param{"a/b": {}} }, "params"},
		{"empty parameter name", func(a *Action) { a.Params = map[string]Param{"": {}} }, "params"},
		{"too many parameters", func(a *Action) {
			a.Params = map[string]Param{}
			for i := range 65 {
				a.Params["p"+strings.Repeat("x", i)] = Param{}
			}
		}, "params"},
		{"bad parameter type", func(a *Action) { a.Params = map[string]Param{"qty": {Type: "int"}} }, "params.qty.type"},
		{"parameter type null", func(a *Action) { a.Params = map[string]Param{"qty": {Type: "null"}} }, "params.qty.type"},
		{"minimum greater than maximum", func(a *Action) {
			a.Params = map[string]Param{"qty": {Type: "integer", Minimum: ptrF(5), Maximum: ptrF(1)}}
		}, "params.qty"},
		{"minLength greater than maxLength", func(a *Action) {
			a.Params = map[string]Param{"qty": {Type: "string", MinLength: ptrI(5), MaxLength: ptrI(1)}}
		}, "params.qty"},
		{"negative maxLength", func(a *Action) { a.Params = map[string]Param{"qty": {Type: "string", MaxLength: ptrI(-1)}} }, "params.qty"},
		{"minItems greater than maxItems", func(a *Action) {
			a.Params = map[string]Param{"qty": {Type: "array", MinItems: ptrI(3), MaxItems: ptrI(2)}}
		}, "params.qty"},
		{"negative minItems", func(a *Action) { a.Params = map[string]Param{"qty": {Type: "array", MinItems: ptrI(-1)}} }, "params.qty"},
		{"bad pattern", func(a *Action) { a.Params = map[string]Param{"qty": {Type: "string", Pattern: "a(b"}} }, "params.qty.pattern"},
		{"pattern in RE2 syntax, not ECMAScript", func(a *Action) { a.Params = map[string]Param{"qty": {Type: "string", Pattern: "(?i)a"}} }, "params.qty.pattern"},
		{"pattern outside the subset every host evaluates alike", func(a *Action) { a.Params = map[string]Param{"qty": {Type: "string", Pattern: `\p{L}`}} }, "params.qty.pattern"},
		{"pattern too long", func(a *Action) {
			a.Params = map[string]Param{"qty": {Type: "string", Pattern: strings.Repeat("a", 513)}}
		}, "params.qty.pattern"},
		{"items on a string", func(a *Action) {
			a.Params = map[string]Param{"qty": {Type: "string", Items: &Param{Type: "string"}}}
		}, "params.qty.items"},
		{"items on an untyped parameter", func(a *Action) { a.Params = map[string]Param{"qty": {Items: &Param{}}} }, "params.qty.items"},
		{"bad items type", func(a *Action) {
			a.Params = map[string]Param{"tags": {Type: "array", Items: &Param{Type: "text"}}}
		}, "params.tags.items.type"},
		{"nested params too deep", func(a *Action) { a.Params = map[string]Param{"qty": *nestedItems(9)} },
			"params.qty" + strings.Repeat(".items", 9)},
		{"too many enum values", func(a *Action) {
			en := make([]any, 257)
			for i := range en {
				en[i] = i
			}
			a.Params = map[string]Param{"qty": {Enum: en}}
		}, "params.qty.enum"},
		{"enum value not JSON", func(a *Action) { a.Params = map[string]Param{"qty": {Enum: []any{ch}}} }, "params.qty.enum"},
		{"default not JSON", func(a *Action) { a.Params = map[string]Param{"qty": {Default: func() {}}} }, "params.qty.default"},
		{"parameter description too long", func(a *Action) {
			a.Params = map[string]Param{"qty": {Description: strings.Repeat("d", 2001)}}
		}, "params.qty.description"},
		{"param named record on a row action", func(a *Action) {
			a.Record = &RecordRef{Kind: "order"}
			a.Params = map[string]Param{"record": {Type: "string"}}
		}, "params.record"},
		{"record kind empty", func(a *Action) { a.Record = &RecordRef{} }, "record.kind"},
		{"record kind with a space", func(a *Action) { a.Record = &RecordRef{Kind: "sales order"} }, "record.kind"},
		{"record kind with @", func(a *Action) { a.Record = &RecordRef{Kind: "order@x"} }, "record.kind"},
		{"record id with a space", func(a *Action) { a.Record = &RecordRef{Kind: "order", ID: "ord 1"} }, "record.id"},
		{"record id of 129 chars", func(a *Action) { a.Record = &RecordRef{Kind: "order", ID: strings.Repeat("1", 129)} }, "record.id"},
		{"handoff without prompt", func(a *Action) { a.Handoff = &Handoff{} }, "handoff.prompt"},
		{"handoff prompt too long", func(a *Action) { a.Handoff = &Handoff{Prompt: strings.Repeat("p", 1001)} }, "handoff.prompt"},
		{"handoff negative timeout", func(a *Action) { a.Handoff = &Handoff{Prompt: "Sign", TimeoutMs: -1} }, "handoff.timeoutMs"},
		{"expect without state", func(a *Action) { a.Expect = &Expectation{Change: "increase"} }, "expect.state"},
		{"expect with a bad state key", func(a *Action) { a.Expect = &Expectation{State: "cart count", Change: "any"} }, "expect.state"},
		{"expect without condition", func(a *Action) { a.Expect = &Expectation{State: "cart.count"} }, "expect"},
		{"expect with a bad change", func(a *Action) { a.Expect = &Expectation{State: "cart.count", Change: "grow"} }, "expect.change"},
		{"expect negative timeout", func(a *Action) {
			a.Expect = &Expectation{State: "cart.count", Change: "any", TimeoutMs: -5}
		}, "expect.timeoutMs"},
		{"too many steps", func(a *Action) { a.Steps = make([]Step, 33) }, "steps"},
		{"step title too long", func(a *Action) { a.Steps = []Step{{}, {Title: strings.Repeat("t", 201)}} }, "steps[1].title"},
		{"step expect without condition", func(a *Action) { a.Steps = []Step{{Expect: &Expectation{State: "cart.count"}}} }, "steps[0].expect"},
		{"bad region", func(a *Action) { a.Region = "main modal" }, "region"},
		{"identity is a channel", func(a *Action) { a.Identity = ch }, "identity"},
		{"identity holds a function", func(a *Action) { a.Identity = map[string]any{"src": func() {}} }, "identity"},
	}
	e := declEnv(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := validAction()
			tt.edit(&a)
			checkRefused(t, e, "action", tt.field, func() (*Handle, error) { return e.rt.DeclareAction(a) })
		})
	}
}

// The limits themselves are allowed: a table of declarations at the edge.
func TestDeclareActionAcceptsEdges(t *testing.T) {
	tests := []struct {
		name string
		edit func(a *Action)
	}{
		{"id of 128 chars", func(a *Action) { a.ID = strings.Repeat("a", 128) }},
		{"id of one digit", func(a *Action) { a.ID = "7" }},
		{"id with dots, dashes and underscores", func(a *Action) { a.ID = "a.b-c_d" }},
		{"title of 200 characters", func(a *Action) { a.Title = strings.Repeat("é", 200) }},
		{"params nested 8 deep", func(a *Action) { a.Params = map[string]Param{"qty": *nestedItems(8)} }},
		{"64 parameters", func(a *Action) {
			a.Params = map[string]Param{}
			for i := range 64 {
				a.Params["p"+strings.Repeat("x", i)] = Param{}
			}
		}},
		{"param named record on a plain action", func(a *Action) { a.Params = map[string]Param{"record": {Type: "string"}} }},
		{"risk read", func(a *Action) { a.Risk = schema.RiskRead }},
		{"risk destructive", func(a *Action) { a.Risk = schema.RiskDestructive }},
		{"row action with a record id with colons and tildes", func(a *Action) { a.Record = &RecordRef{Kind: "order", ID: "a:b~c"} }},
		{"expect with only equals", func(a *Action) { a.Expect = &Expectation{State: "cart.count", HasEquals: true} }},
		{"expect with only a predicate", func(a *Action) {
			a.Expect = &Expectation{State: "cart.count", Predicate: func(_, _ any) bool { return true }}
		}},
		{"identity of JSON data", func(a *Action) { a.Identity = map[string]any{"src": "() => add()", "n": 1} }},
		{"equal min and max", func(a *Action) {
			a.Params = map[string]Param{"qty": {Type: "number", Minimum: ptrF(1), Maximum: ptrF(1), MinLength: ptrI(0)}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := New(WithClock(NewFakeClock(0)))
			a := validAction()
			tt.edit(&a)
			h, err := rt.DeclareAction(a)
			if err != nil || h == nil {
				t.Fatalf("DeclareAction = %v, %v; want a handle", h, err)
			}
		})
	}
}

func TestDeclarationErrorText(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("x", 200) + "@"
	_, err := e.rt.DeclareAction(Action{ID: long, Title: "T"})
	var de *DeclarationError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v", err)
	}
	if len(de.Key) != 64 {
		t.Errorf("Key is %d bytes, want it cut to 64", len(de.Key))
	}
	want := `pling: invalid action "` + strings.Repeat("x", 64) + `": id: ` + de.Reason
	if got := de.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestDeclareOtherKindsRefuseBadDeclarations(t *testing.T) {
	ch := make(chan int)
	read := func(context.Context) (any, error) { return 1, nil }
	rows := func(context.Context) ([]RecordItem, error) { return nil, nil }
	tests := []struct {
		name    string
		kind    string
		field   string
		declare func(rt *Runtime) (*Handle, error)
	}{
		{"state with an empty key", "state", "key", func(rt *Runtime) (*Handle, error) { return rt.DeclareState(State{Read: read}) }},
		{"state key with @", "state", "key", func(rt *Runtime) (*Handle, error) { return rt.DeclareState(State{Key: "cart@count", Read: read}) }},
		{"state key with :", "state", "key", func(rt *Runtime) (*Handle, error) { return rt.DeclareState(State{Key: "cart:count", Read: read}) }},
		{"state without a reader", "state", "read", func(rt *Runtime) (*Handle, error) { return rt.DeclareState(State{Key: "cart.count"}) }},
		{"state description too long", "state", "description", func(rt *Runtime) (*Handle, error) {
			return rt.DeclareState(State{Key: "cart.count", Read: read, Description: strings.Repeat("d", 2001)})
		}},
		{"state identity is a channel", "state", "identity", func(rt *Runtime) (*Handle, error) {
			return rt.DeclareState(State{Key: "cart.count", Read: read, Identity: ch})
		}},
		{"guide with an empty target", "guide", "target", func(rt *Runtime) (*Handle, error) { return rt.DeclareGuide(Guide{Label: "x"}) }},
		{"guide target with a space", "guide", "target", func(rt *Runtime) (*Handle, error) { return rt.DeclareGuide(Guide{Target: "check out"}) }},
		{"guide label too long", "guide", "label", func(rt *Runtime) (*Handle, error) {
			return rt.DeclareGuide(Guide{Target: "checkout", Label: strings.Repeat("l", 201)})
		}},
		{"guide selector too long", "guide", "selector", func(rt *Runtime) (*Handle, error) {
			return rt.DeclareGuide(Guide{Target: "checkout", Selector: strings.Repeat("s", 2001)})
		}},
		{"guide selector not UTF-8", "guide", "selector", func(rt *Runtime) (*Handle, error) {
			return rt.DeclareGuide(Guide{Target: "checkout", Selector: "#a\xfe"})
		}},
		{"guide identity is a function", "guide", "identity", func(rt *Runtime) (*Handle, error) {
			return rt.DeclareGuide(Guide{Target: "checkout", Identity: func() {}})
		}},
		{"region with an empty id", "region", "id", func(rt *Runtime) (*Handle, error) { return rt.DeclareRegion(Region{}) }},
		{"region id with @", "region", "id", func(rt *Runtime) (*Handle, error) { return rt.DeclareRegion(Region{ID: "a@b"}) }},
		{"region title too long", "region", "title", func(rt *Runtime) (*Handle, error) {
			return rt.DeclareRegion(Region{ID: "orders", Title: strings.Repeat("t", 201)})
		}},
		{"region identity is a channel", "region", "identity", func(rt *Runtime) (*Handle, error) {
			return rt.DeclareRegion(Region{ID: "orders", Identity: ch})
		}},
		{"records with an empty kind", "records", "kind", func(rt *Runtime) (*Handle, error) { return rt.DeclareRecords(Records{Read: rows}) }},
		{"records kind with @", "records", "kind", func(rt *Runtime) (*Handle, error) { return rt.DeclareRecords(Records{Kind: "o@x", Read: rows}) }},
		{"records without a reader", "records", "read", func(rt *Runtime) (*Handle, error) { return rt.DeclareRecords(Records{Kind: "order"}) }},
		{"hook with neither before nor after", "hook", "before", func(rt *Runtime) (*Handle, error) { return rt.AddHook(Hook{}) }},
	}
	e := declEnv(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkRefused(t, e, tt.kind, tt.field, func() (*Handle, error) { return tt.declare(e.rt) })
		})
	}
}

// A declaration is copied: changing the caller's value afterwards changes
// nothing in the registry.
func TestDeclareActionCopiesTheDeclaration(t *testing.T) {
	e := newEnv(t)
	a := validAction()
	a.Record = nil
	a.Params = map[string]Param{"sku": {Type: "string"}}
	a.Expect = &Expectation{State: "cart.count", Change: "any"}
	a.Handoff = nil
	mustDeclare(t, e.rt, a)
	before := e.describeBytes()
	a.Params["qty"] = Param{Type: "integer"}
	a.Expect.Change = "increase"
	a.Title = "changed"
	if after := e.describeBytes(); after != before {
		t.Errorf("changing the declared value changed the registry:\n%s", cmp.Diff(before, after))
	}
}

// TestTitleDefaultsToID: only id is required (page-api §2.1, spec §4.1);
// an action declared without a title is described with its id as title.
func TestTitleDefaultsToID(t *testing.T) {
	e := newEnv(t)
	if _, err := e.rt.DeclareAction(Action{ID: "board.rename"}); err != nil {
		t.Fatalf("an action without a title was refused: %v", err)
	}
	d := e.describe("")
	if len(d.Capabilities) != 1 || d.Capabilities[0].Title != "board.rename" {
		t.Errorf("capabilities = %+v, want board.rename titled by its id", d.Capabilities)
	}
}
