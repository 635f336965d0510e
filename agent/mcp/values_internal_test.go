package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/runtime"
)

// dumpBridge is a bridge to a page whose action "dump" returns a string
// of n characters, the last of them n%10.
func dumpBridge(t *testing.T) *Bridge {
	t.Helper()
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0)))
	if _, err := rt.DeclareAction(runtime.Action{ID: "dump", Title: "Dump", Risk: "read",
		Params: map[string]runtime.Param{"n": {Type: "integer", Required: true}},
		Run: func(_ context.Context, c *runtime.Call) (any, error) {
			var n int
			switch x := c.Input["n"].(type) {
			case float64:
				n = int(x)
			case json.Number:
				i, _ := x.Int64()
				n = int(i)
			case int64:
				n = int(x)
			default:
				return nil, fmt.Errorf("n is %T", x)
			}
			return strings.Repeat("x", n-1) + string(rune('0'+n%10)), nil
		}}); err != nil {
		t.Fatal(err)
	}
	return NewBridge(agent.New(agent.InProcess(rt)))
}

// valueClient is an MCP client session on b over in-memory transports,
// and the server's side of it.
func valueClient(t *testing.T, b *Bridge) (*sdk.ClientSession, *sdk.ServerSession) {
	t.Helper()
	return valueClientVersion(t, b, "")
}

// valueClientVersion is valueClient asking for an MCP protocol version
// ("" for the SDK's newest).
func valueClientVersion(t *testing.T, b *Bridge, version string) (*sdk.ClientSession, *sdk.ServerSession) {
	t.Helper()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := b.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil).Connect(context.Background(), ct, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, ss
}

// dump calls dump with n and returns the result's text and the URIs of
// its resource links.
func dump(t *testing.T, cs *sdk.ClientSession, n int) (text string, links []string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "dump", Arguments: map[string]any{"n": n}})
	if err != nil || res.IsError {
		t.Fatalf("dump %d: %v %+v", n, err, res)
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			text += c.Text
		case *sdk.ResourceLink:
			links = append(links, c.URI)
		}
	}
	return text, links
}

// readAll reads the pages at links and decodes their joined text.
func readAll(cs *sdk.ClientSession, links []string) (string, error) {
	var b strings.Builder
	for _, l := range links {
		rr, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: l})
		if err != nil {
			return "", err
		}
		b.WriteString(rr.Contents[0].Text)
	}
	var s string
	err := json.Unmarshal([]byte(b.String()), &s)
	return s, err
}

// TestHeldValuesBounded: a session holds at most MaxHeldValues values
// and MaxHeldBytes of them; the oldest goes first, the result that let
// it go says so, and reading it then says it is no longer held. A value
// over MaxHeldBytes is not held: its result is cut and says why. A
// value short enough for the result's text is not held at all.
func TestHeldValuesBounded(t *testing.T) {
	t.Run("count", func(t *testing.T) {
		cs, _ := valueClient(t, dumpBridge(t))
		var first []string
		for i := 0; i < MaxHeldValues; i++ {
			text, links := dump(t, cs, 1000+i)
			if len(links) != 1 || strings.Contains(text, "let go") {
				t.Fatalf("value %d: links %v, text %q", i+1, links, text)
			}
			if i == 0 {
				first = links
			}
		}
		if _, err := readAll(cs, first); err != nil {
			t.Fatalf("the first value, before the bound: %v", err)
		}
		text, _ := dump(t, cs, 999)
		if !strings.Contains(text, "let go of the earlier value(s) v1 ") {
			t.Errorf("the value past the bound does not say v1 went:\n%s", text)
		}
		_, err := readAll(cs, first)
		if err == nil || !strings.Contains(err.Error(), "does not hold the value") {
			t.Errorf("reading the value let go of: %v", err)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		cs, _ := valueClient(t, dumpBridge(t))
		big := MaxHeldBytes/2 - 100
		_, one := dump(t, cs, big)
		_, two := dump(t, cs, big)
		text, three := dump(t, cs, big)
		if !strings.Contains(text, "let go of the earlier value(s) v1 ") {
			t.Errorf("the third half of the bound does not say v1 went:\n%s", text)
		}
		if _, err := readAll(cs, one); err == nil {
			t.Error("v1 is still held past the byte bound")
		}
		for _, links := range [][]string{two, three} {
			got, err := readAll(cs, links)
			if err != nil || len(got) != big {
				t.Errorf("a held value: %d characters, %v; want %d", len(got), err, big)
			}
		}
		if len(three) != (big+2+ValuePageBytes-1)/ValuePageBytes {
			t.Errorf("%d pages for %d bytes", len(three), big+2)
		}
	})
	t.Run("over the bound", func(t *testing.T) {
		cs, _ := valueClient(t, dumpBridge(t))
		text, links := dump(t, cs, MaxHeldBytes+1)
		if len(links) != 0 || !strings.Contains(text, "over the 4 MiB it holds for a session") {
			t.Errorf("a value over the bound: %d links, text %q", len(links), text)
		}
	})
	t.Run("short", func(t *testing.T) {
		cs, _ := valueClient(t, dumpBridge(t))
		text, links := dump(t, cs, maxValueText)
		if len(links) != 0 || strings.Contains(text, "cut") {
			t.Errorf("a value of %d characters: %d links, text %q", maxValueText, len(links), text)
		}
	})
}

// TestHeldValuesPerSession: a value handed over to one session cannot
// be read by another session of the same server, and when its session
// ends the values it held are let go.
func TestHeldValuesPerSession(t *testing.T) {
	b := dumpBridge(t)
	alice, ss := valueClient(t, b)
	bob, _ := valueClient(t, b)
	_, links := dump(t, alice, 5000)
	if got, err := readAll(alice, links); err != nil || len(got) != 5000 {
		t.Fatalf("alice reads her value: %d characters, %v", len(got), err)
	}
	if _, err := readAll(bob, links); err == nil {
		t.Error("bob read alice's value")
	}
	alice.Close()
	_ = ss.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b.held.mu.Lock()
		_, held := b.held.sessions[ss]
		b.held.mu.Unlock()
		if !held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the values of a session that ended are still held")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestValueJSONEscapes: a held value's text is its JSON with every
// character a reader cannot see escaped (in a string, its JSON escape),
// so it still decodes to the value the page returned.
func TestValueJSONEscapes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value any
		want  string
	}{
		{"string", "a\u202eb\u200b\nc\\\"", `"a\u202eb\u200b\nc\\\""`},
		{"object", map[string]any{"k\u2066": []any{1, "x\U000E0041"}}, `{"k\u2066":[1,"x\udb40\udc41"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := json.MarshalIndent(tc.value, "", "  ")
			raw = []byte(strings.NewReplacer(`\u202e`, "\u202e", `\u200b`, "\u200b", `\u2066`, "\u2066").Replace(string(raw)))
			got, ok := valueJSON(raw)
			if !ok {
				t.Fatal("not JSON")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			var back any
			if err := json.Unmarshal([]byte(got), &back); err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(tc.value)
			b, _ := json.Marshal(back)
			if diff := cmp.Diff(string(want), string(b)); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPaginate: pages are at most ValuePageBytes, cut at the start of a
// character, and cover the text once.
func TestPaginate(t *testing.T) {
	text := strings.Repeat("é", ValuePageBytes) // two bytes each
	starts := paginate(text)
	if len(starts) != 2 {
		t.Fatalf("%d pages for %d bytes", len(starts), len(text))
	}
	v := &heldValue{text: text, pages: starts}
	var joined string
	for n := 1; n <= len(starts); n++ {
		p := v.pageText(n)
		if len(p) > ValuePageBytes || !strings.HasPrefix(p, "é") {
			t.Errorf("page %d: %d bytes, begins %q", n, len(p), p[:2])
		}
		joined += p
	}
	if joined != text {
		t.Error("the pages joined are not the text")
	}
}

// TestHeldValueOlderClient: a client of a protocol version before
// resource_link content gets no links (it might refuse the result), and
// the text names the pages' URIs, which it reads as any client does.
func TestHeldValueOlderClient(t *testing.T) {
	for _, tc := range []struct {
		version string
		links   int
	}{{"2025-03-26", 0}, {"2025-06-18", 1}, {"", 1}} {
		t.Run("version "+tc.version, func(t *testing.T) {
			cs, _ := valueClientVersion(t, dumpBridge(t), tc.version)
			text, links := dump(t, cs, 5000)
			if len(links) != tc.links {
				t.Errorf("%d links, want %d", len(links), tc.links)
			}
			if got, err := readAll(cs, []string{"pling://value/v1?page=1"}); err != nil || len(got) != 5000 || !strings.Contains(text, "pling://value/v1?page=1") {
				t.Errorf("reading the page the text names: %d characters, %v; text %q", len(got), err, text)
			}
		})
	}
}
