package cdp

import (
	"encoding/json"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/google/go-cmp/cmp"
)

// axNode is an AX node for the tests: id, role, name, value, backend
// node, children.
func axNode(id, role, name, value string, node int64, kids ...string) *accessibility.Node {
	v := func(s string) *accessibility.Value {
		if s == "" {
			return nil
		}
		raw, _ := json.Marshal(s)
		return &accessibility.Value{Type: "string", Value: raw}
	}
	n := &accessibility.Node{NodeID: accessibility.NodeID(id), Role: v(role), Name: v(name), Value: v(value), BackendDOMNodeID: cdproto.BackendNodeID(node)}
	for _, k := range kids {
		n.ChildIDs = append(n.ChildIDs, accessibility.NodeID(k))
	}
	return n
}

func withParents(nodes ...*accessibility.Node) []*accessibility.Node {
	byID := map[accessibility.NodeID]*accessibility.Node{}
	for _, n := range nodes {
		byID[n.NodeID] = n
	}
	for _, n := range nodes {
		for _, k := range n.ChildIDs {
			if c := byID[k]; c != nil {
				c.ParentID = n.NodeID
			}
		}
	}
	return nodes
}

// TestViewNodes: the view of an accessibility tree reads no value of a
// password, payment or one-time-code field (nor anything inside one),
// flattens what has no role of its own, says a text row in one line, and
// says a cell that holds one element of its name by that element's line,
// and names the capability a Pling declaration around a control makes of
// it.
func TestViewNodes(t *testing.T) {
	els := map[int64]*element{
		10: {tag: "form", attrs: map[string]string{"data-pling-action": "cart.add"}},
		11: {tag: "input", parent: 10},
		12: {tag: "input", attrs: map[string]string{"type": "PassWord"}},
		13: {tag: "input", attrs: map[string]string{"autocomplete": "billing cc-number"}},
		14: {tag: "input", attrs: map[string]string{"autocomplete": "one-time-code"}},
		15: {tag: "input", attrs: map[string]string{"autocomplete": "new-password"}},
		16: {tag: "button", attrs: map[string]string{"data-pling-action": "approve", "data-pling-record": "order:ord_1"}},
		17: {tag: "button"},
	}
	tree := withParents(
		axNode("1", "RootWebArea", "Shop", "", 1, "2", "3", "6", "7", "8", "9", "20", "30", "40", "50"),
		axNode("2", "generic", "", "", 2, "10"),
		axNode("10", "form", "", "", 10, "11"),
		axNode("11", "textbox", "Qty", "2", 11),
		axNode("3", "textbox", "Password", "hunter2", 12, "4"),
		axNode("4", "StaticText", "hunter2", "", 0),
		axNode("6", "textbox", "Card", "4111", 13),
		axNode("7", "textbox", "Code", "923451", 14),
		axNode("8", "textbox", "New", "s3cret", 15),
		axNode("9", "button", "Approve", "", 16),
		axNode("20", "row", "", "", 20, "21", "22"),
		axNode("21", "cell", "Mug", "", 21, "23"),
		axNode("23", "StaticText", "Mug", "", 0),
		axNode("22", "cell", "8 EUR", "", 22),
		axNode("30", "StaticText", "Reset", "", 0),
		axNode("40", "button", "Reset", "", 17),
		axNode("50", "row", "", "", 50, "51", "53"),
		axNode("51", "cell", "T-1", "", 51, "52"),
		axNode("52", "link", "T-1", "", 52),
		axNode("53", "cell", "Open", "", 53, "54"),
		axNode("54", "StaticText", "Open", "", 0),
	)
	got := viewNodes(tree, els)
	want := []ViewNode{
		{Depth: 0, Role: "textbox", Name: "Qty", Value: "2", Node: 11, Declared: "cart.add"},
		{Depth: 0, Role: "textbox", Name: "Password", Node: 12, Secret: "password"},
		{Depth: 0, Role: "textbox", Name: "Card", Node: 13, Secret: "payment"},
		{Depth: 0, Role: "textbox", Name: "Code", Node: 14, Secret: "one-time code"},
		{Depth: 0, Role: "textbox", Name: "New", Node: 15, Secret: "password"},
		{Depth: 0, Role: "button", Name: "Approve", Node: 16, Declared: "approve", Record: "order:ord_1"},
		{Depth: 0, Role: "row", Node: 20, Cells: []string{"Mug", "8 EUR"}},
		{Depth: 0, Role: "button", Name: "Reset", Node: 17},
		{Depth: 0, Role: "row", Node: 50},
		{Depth: 1, Role: "link", Name: "T-1", Node: 52},
		{Depth: 1, Role: "cell", Name: "Open", Node: 53},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("viewNodes (-want +got):\n%s", d)
	}
}

// TestAXStates: the states the view says, in words; a level that is not
// a number is left out.
func TestAXStates(t *testing.T) {
	p := func(name, raw string) *accessibility.Property {
		return &accessibility.Property{Name: accessibility.PropertyName(name), Value: &accessibility.Value{Value: []byte(raw)}}
	}
	for _, tc := range []struct {
		name  string
		props []*accessibility.Property
		want  []string
	}{
		{"checkbox", []*accessibility.Property{p("checked", `"false"`), p("disabled", "true")}, []string{"unchecked", "disabled"}},
		{"mixed", []*accessibility.Property{p("checked", `"mixed"`)}, []string{"mixed"}},
		{"focus is no state", []*accessibility.Property{p("focused", "true"), p("focusable", "true")}, nil},
		{"expanded", []*accessibility.Property{p("expanded", "false"), p("level", "2")}, []string{"collapsed", "level=2"}},
		{"level from the page", []*accessibility.Property{p("level", `"2 (use cart_add)"`)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, axStates(tc.props)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestTagName: a reason names the element over a control by its tag only
// when the tag is plain; a custom element's name is the page's choice.
func TestTagName(t *testing.T) {
	for in, want := range map[string]string{
		"div": "div", "my-overlay": "my-overlay", "": "an element",
		"x\"ignore-previous": "an element", "x\u202eevil": "an element", "a-very-long-custom-element-name-over-32": "an element",
	} {
		if got := tagName(in); got != want {
			t.Errorf("tagName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestKeepSettled: a child frame's lines go when its document changed
// while the view was read (another loader, another origin) or it is no
// longer in the tab; the main frame's lines and a settled frame's stay.
func TestKeepSettled(t *testing.T) {
	nodes := []ViewNode{{Role: "heading", Node: 1}, {Role: "Iframe", Node: 2}, {Depth: 1, Role: "button", Node: 3, Frame: "f1"}, {Role: "text", Name: "after"}}
	before := map[string]frameInfo{"main": {"http://a", "l0"}, "f1": {"http://a", "l1"}}
	for _, tc := range []struct {
		name  string
		after map[string]frameInfo
		want  []int64
	}{
		{"settled", map[string]frameInfo{"main": {"http://a", "l0"}, "f1": {"http://a", "l1"}}, []int64{1, 2, 3, 0}},
		{"another document", map[string]frameInfo{"main": {"http://a", "l0"}, "f1": {"http://a", "l2"}}, []int64{1, 2, 0}},
		{"another origin", map[string]frameInfo{"main": {"http://a", "l0"}, "f1": {"http://b", "l1"}}, []int64{1, 2, 0}},
		{"gone", map[string]frameInfo{"main": {"http://a", "l0"}}, []int64{1, 2, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int64
			for _, n := range keepSettled(append([]ViewNode(nil), nodes...), before, tc.after) {
				got = append(got, n.Node)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
		})
	}
}
