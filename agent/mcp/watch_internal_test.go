package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/runtime"
)

// TestWatchDescribesWhenChanged: with a change mark, the --poll watch
// describes only when the page changed. After the first describe, ten
// calls that change no tool and many looks at an unchanged mark cause
// no describe; a moved mark causes one, and the page is quiet again;
// without a move, one describe a quiet period keeps a page that changes
// without moving its mark followed. (Were every look to describe, that
// would be one every 10 ms here.)
func TestWatchDescribesWhenChanged(t *testing.T) {
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0)))
	var count atomic.Int64
	if _, err := rt.DeclareState(runtime.State{Key: "cart.count", Read: func(context.Context) (any, error) { return count.Load(), nil }}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.DeclareAction(runtime.Action{ID: "cart.add", Title: "Add to cart",
		Params: map[string]runtime.Param{"sku": {Type: "string", Required: true}},
		Run:    func(context.Context, *runtime.Call) (any, error) { return count.Add(1), nil }}); err != nil {
		t.Fatal(err)
	}
	tr, describes := countDescribes(rt)
	b, setMark := markedBridge(tr)
	cs, _ := valueClient(t, b)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n := describes.Load(); n != 1 {
		t.Fatalf("%d describes for the first tools/list, want 1", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.Watch(ctx, 10*time.Millisecond)

	for i := 0; i < 10; i++ {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "cart_add", Arguments: map[string]any{"sku": fmt.Sprint("A", i)}})
		if err != nil || res.IsError {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if n := describes.Load(); n != 1 {
		t.Errorf("%d describes after ten calls and 300 ms of looks at an unchanged page, want 1", n)
	}

	setMark("m2")
	waitDescribes(t, describes, 2)
	time.Sleep(200 * time.Millisecond)
	if n := describes.Load(); n != 2 {
		t.Errorf("%d describes after the mark moved once, want 2", n)
	}

	b.mu.Lock()
	b.quiet = 50 * time.Millisecond
	b.mu.Unlock()
	waitDescribes(t, describes, 3)
}

func waitDescribes(t *testing.T, describes *atomic.Int64, want int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); describes.Load() < want; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d describes in 10 s, want %d", describes.Load(), want)
		}
	}
}

// TestRowCallsDoNotDescribe: calls of a row action on rows the last
// describe did not list (a page of 500 orders lists 50) go to the page
// at once, by id or by label, without a describe of every record before
// each; a row the page does not have still gets the bridge's account of
// what ids and labels look like (a describe of every record, after the
// page refused it).
func TestRowCallsDoNotDescribe(t *testing.T) {
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0)))
	rows := make([]runtime.RecordItem, 500)
	for i := range rows {
		rows[i] = runtime.RecordItem{ID: fmt.Sprintf("ord_%d", i+1), Label: fmt.Sprintf("#%d", 1001+i)}
	}
	if _, err := rt.DeclareRecords(runtime.Records{Kind: "order", Read: func(context.Context) ([]runtime.RecordItem, error) { return rows, nil }}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.DeclareAction(runtime.Action{ID: "pay", Title: "Pay the order", Record: &runtime.RecordRef{Kind: "order"},
		Run: func(_ context.Context, c *runtime.Call) (any, error) { return "paid " + c.Record, nil }}); err != nil {
		t.Fatal(err)
	}
	tr, describes := countDescribes(rt)
	cs, _ := valueClient(t, NewBridge(agent.New(tr)))
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	start := describes.Load()
	call := func(record string) string {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "pay__order", Arguments: map[string]any{"record": record}})
		if err != nil {
			t.Fatalf("pay %s: %v", record, err)
		}
		return res.Content[0].(*sdk.TextContent).Text
	}
	for i := 0; i < 10; i++ {
		if txt := call(fmt.Sprintf("ord_%d", 300+i)); !strings.HasPrefix(txt, "Done: pay@order on ord_") {
			t.Fatalf("pay ord_%d: %s", 300+i, txt)
		}
	}
	if txt := call("#1400"); !strings.Contains(txt, "Done: pay@order on ord_400 (#1400 is ord_400).") {
		t.Errorf("pay #1400: %s", txt)
	}
	if n := describes.Load() - start; n != 0 {
		t.Errorf("%d describes for eleven calls on rows the page has, want none", n)
	}
	if txt := call("#99999"); !strings.Contains(txt, `No order has the id or label "#99999". Next: pass the id or the whole label of a order`) {
		t.Errorf("pay #99999: %s", txt)
	}
	// ACTION_NOT_FOUND says to describe again: the client does, the tool
	// list follows, and the bridge looks at every record for its account.
	if n := describes.Load() - start; n < 1 || n > 3 {
		t.Errorf("%d describes after a row the page does not have, want 1 to 3", n)
	}
}

// countDescribes is a transport to rt in process and the count of the
// describes it carried.
func countDescribes(rt *runtime.Runtime) (agent.Transport, *atomic.Int64) {
	inner := agent.InProcess(rt)
	var describes atomic.Int64
	return agent.TransportFunc(func(ctx context.Context, raw []byte) ([]byte, error) {
		var m struct{ Method string }
		_ = json.Unmarshal(raw, &m)
		if m.Method == "describe" {
			describes.Add(1)
		}
		return inner.RoundTrip(ctx, raw)
	}), &describes
}

// TestToolsListDescribesWhenChanged: with a change mark, a tools/list
// answers from the last describe while the mark stays where it was
// before that describe: ten lists cost no describe; a moved mark costs
// one, and the list after it none again; a quiet period without a move
// costs one too.
func TestToolsListDescribesWhenChanged(t *testing.T) {
	rt := runtime.New(runtime.WithExpose("*"), runtime.WithClock(runtime.NewFakeClock(0)))
	if _, err := rt.DeclareAction(runtime.Action{ID: "cart.add", Title: "Add to cart",
		Run: func(context.Context, *runtime.Call) (any, error) { return true, nil }}); err != nil {
		t.Fatal(err)
	}
	tr, describes := countDescribes(rt)
	b, setMark := markedBridge(tr)
	cs, _ := valueClient(t, b)
	list := func(want int64, what string) {
		t.Helper()
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil || len(res.Tools) != 1 {
			t.Fatalf("%s: tools/list: %v %+v", what, err, res)
		}
		if n := describes.Load(); n != want {
			t.Errorf("%s: %d describes, want %d", what, n, want)
		}
	}
	list(1, "the first tools/list")
	for i := 0; i < 10; i++ {
		list(1, fmt.Sprintf("tools/list %d on an unchanged page", i+2))
	}
	setMark("m2")
	list(2, "a tools/list after the mark moved")
	list(2, "the tools/list after that")
	b.mu.Lock()
	b.quiet = 0
	b.mu.Unlock()
	list(3, "a tools/list once the quiet period passed")
}

// markedBridge is a bridge over tr whose change mark is "m1" until
// setMark moves it, and whose describes are trusted for an hour while it
// stays.
func markedBridge(tr agent.Transport) (b *Bridge, setMark func(string)) {
	var mu sync.Mutex
	mark := "m1"
	b = NewBridge(agent.New(tr), WithChangeMark(func(context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		return mark, nil
	}))
	b.mu.Lock()
	b.quiet = time.Hour
	b.mu.Unlock()
	return b, func(m string) { mu.Lock(); mark = m; mu.Unlock() }
}
