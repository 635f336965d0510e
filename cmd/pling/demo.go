package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
	plingmcp "github.com/pling-go/pling/agent/mcp"
	"github.com/pling-go/pling/internal/demosite/site"
	"github.com/pling-go/pling/schema"
)

func init() {
	register(command{"demo", "run a scripted agent session against the demo site in headless Chromium", runDemo})
}

// runDemo is the main job: it serves the demo site, opens its pages in
// headless Chromium, and drives them as an agent would, through the Go
// client over CDP, printing a transcript. Every step checks its outcome;
// the exit status is 0 only when all of them held.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := newFlags("demo", stderr,
		"Usage: pling demo [--dist DIR] [-v]",
		"Serves the demo site, opens it in headless Chromium ($PLING_CHROMIUM or /usr/bin/chromium)",
		"and runs a scripted agent session, printing a transcript. Exits 0 when every step held.",
	)
	dist := fl.String("dist", "", "serve the module from this directory instead of the embedded copy (make wasm builds dist/)")
	verbose := fl.Bool("v", false, "also print every Surface exchange")
	if exit, ok := parseNoArgs(fl, args, stderr); !ok {
		return exit
	}
	module := site.Module()
	if *dist != "" {
		module = os.DirFS(*dist)
	}
	if _, err := fs.Stat(module, "pling.wasm"); err != nil {
		fmt.Fprintln(stderr, "pling demo: the module is not built: run make wasm (make demo does), or pass --dist dist")
		return 1
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	d := &demo{out: stdout, verbose: *verbose}
	if err := d.run(ctx, module); err != nil {
		fmt.Fprintf(stdout, "\ndemo: FAILED: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "\ndemo: every step held")
	return 0
}

type demo struct {
	out     io.Writer
	verbose bool
	base    string
	lat     map[string][]time.Duration
}

func (d *demo) say(format string, args ...any) { fmt.Fprintf(d.out, format+"\n", args...) }

// logHandler turns the client's log records into transcript lines: the
// rate-limit waits at info level, every exchange with -v.
type logHandler struct{ d *demo }

func (h logHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.d.verbose
}
func (h logHandler) Handle(_ context.Context, r slog.Record) error {
	var parts []string
	r.Attrs(func(a slog.Attr) bool {
		parts = append(parts, a.Key+"="+a.Value.String())
		return true
	})
	h.d.say("      · %s (%s)", strings.TrimPrefix(r.Message, "pling: "), strings.Join(parts, " "))
	return nil
}
func (h logHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h logHandler) WithGroup(string) slog.Handler      { return h }

func (d *demo) run(ctx context.Context, module fs.FS) error {
	srv, err := newServer(ctx, module, site.Demo(), serveOptions{brotli: 1})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := newHTTPServer(srv)
	go hs.Serve(ln)
	defer hs.Close()
	d.base = "http://" + ln.Addr().String()
	d.lat = map[string][]time.Duration{}
	d.say("Pling demo — an agent drives the demo site in headless Chromium through pling.surface.handle")
	d.say("site: %s", d.base)

	if err := d.orders(ctx); err != nil {
		return fmt.Errorf("orders: %w", err)
	}
	if err := d.shop(ctx); err != nil {
		return fmt.Errorf("shop: %w", err)
	}
	d.latencies()
	return nil
}

func (d *demo) open(ctx context.Context, path string) (*cdp.Page, *agent.Client, error) {
	url := d.base + path
	d.say("\n[%s] open %s", strings.Trim(strings.SplitN(path, "?", 2)[0], "/"), url)
	p, err := cdp.Open(ctx, url, cdp.Options{})
	if err != nil {
		return nil, nil, err
	}
	c := agent.New(p, agent.WithIDPrefix("demo"), agent.WithLogger(slog.New(logHandler{d})))
	return p, c, nil
}

// timed runs f, keeps its duration under name, and returns it.
func (d *demo) timed(name string, f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	el := time.Since(start)
	d.lat[name] = append(d.lat[name], el)
	return el, err
}

func (d *demo) orders(ctx context.Context) error {
	page, c, err := d.open(ctx, "/orders/?rate=3,4")
	if err != nil {
		return err
	}
	defer page.Close()

	var desc *schema.SurfaceDescription
	el, err := d.timed("describe via CDP", func() (err error) { desc, err = c.Describe(ctx, nil); return })
	if err != nil {
		return err
	}
	d.say("  describe → revision %s, %d capabilities (%v):", desc.Revision, len(desc.Capabilities), msDur(el))
	var visible string
	for _, cp := range desc.Capabilities {
		line := "    " + cp.ID + " — " + cp.Title
		if r := cp.Record; r != nil {
			line += fmt.Sprintf(" [folded: %d %s records, %d visible, %d offscreen]", r.Total, r.Kind, len(r.Visible), r.Offscreen)
			if visible == "" && len(r.Visible) > 0 {
				visible = r.Visible[0]
			}
		}
		if cp.Approval {
			line += " [needs approval]"
		}
		d.say("%s", line)
	}
	if visible == "" {
		return errors.New("no visible order to act on")
	}

	res, err := c.Invoke(ctx, "approve@order", map[string]any{"record": visible})
	if err != nil {
		return fmt.Errorf("approve@order on %s: %w", visible, err)
	}
	d.say("  invoke approve@order {record: %q} → ok, value %s", visible, compactJSON(res.Value))
	if res.Evidence != nil {
		d.say("    evidence: capability %s, record %s", res.Evidence.Capability, res.Evidence.Record)
	}

	d.say("  a burst of 5 invokes of open@order, with this page's invoke budget of 3 (+4/s):")
	for i := 0; i < 5; i++ {
		res, err := c.Invoke(ctx, "open@order", map[string]any{"record": visible})
		if err != nil {
			return fmt.Errorf("burst %d: %w", i+1, err)
		}
		d.say("    #%d %s → ok", i+1, res.RequestID)
	}

	id := c.NewID()
	if _, err := c.Invoke(ctx, "open@order", map[string]any{"record": visible}, agent.WithRequestID(id)); err != nil {
		return fmt.Errorf("replay, first: %w", err)
	}
	d.say("  invoke open@order as %s → ok", id)
	_, err = c.Invoke(ctx, "open@order", map[string]any{"record": visible}, agent.WithRequestID(id))
	var re *agent.ReplayError
	if !errors.As(err, &re) {
		return fmt.Errorf("replayed id %s: want REPLAY_DETECTED, got %v", id, err)
	}
	d.say("  the same id again → %s (the earlier request completed: %v, ok: %v); the client mints no new id for the same intent",
		re.Code, re.Previous.Completed, re.Previous.OK)

	// In-page and MCP latencies for the note, on the same page.
	for i := 0; i < 5; i++ {
		if _, err := d.inPage(ctx, page, "describe in page", `{"protocol":"pling.surface/0.1","id":"lat-d`+fmt.Sprint(i)+`","method":"describe"}`); err != nil {
			return err
		}
		if _, err := d.timed("describe via CDP", func() error { _, err := c.Describe(ctx, nil); return err }); err != nil {
			return err
		}
	}
	return d.viaMCP(ctx, c)
}

// inPage times pling.surface.handle inside the page (performance.now), the
// cost without any transport.
func (d *demo) inPage(ctx context.Context, page *cdp.Page, name, req string) (time.Duration, error) {
	lit, _ := json.Marshal(req)
	us, err := chromedp.Run(page.Context(), chromedp.Evaluate[float64](`(async () => {
  const t = performance.now(); await pling.surface.handle(`+string(lit)+`); return (performance.now() - t) * 1000;
})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		return 0, err
	}
	el := time.Duration(us * float64(time.Microsecond))
	d.lat[name] = append(d.lat[name], el)
	return el, nil
}

// viaMCP lists and calls tools through the MCP bridge over in-memory
// transports, the path an MCP host takes.
func (d *demo) viaMCP(ctx context.Context, c *agent.Client) error {
	st, ct := sdk.NewInMemoryTransports()
	if _, err := plingmcp.NewServer(c).Connect(ctx, st, nil); err != nil {
		return err
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "pling-demo", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	var n int
	for i := 0; i < 5; i++ {
		if _, err := d.timed("tools/list via MCP", func() error {
			res, err := cs.ListTools(ctx, nil)
			if err == nil {
				n = len(res.Tools)
			}
			return err
		}); err != nil {
			return err
		}
	}
	d.say("  MCP: tools/list → %d tools through the bridge", n)
	return nil
}

func (d *demo) shop(ctx context.Context) error {
	page, c, err := d.open(ctx, "/shop/")
	if err != nil {
		return err
	}
	defer page.Close()
	res, err := c.Invoke(ctx, "cart.add", map[string]any{"sku": "tent-2p", "qty": 1})
	if err != nil {
		return fmt.Errorf("cart.add: %w", err)
	}
	d.say("  invoke cart.add {sku: tent-2p} → ok; cart.count %s", stateChange(res.Observation, "cart.count"))

	// The person: waits for the bank's window and the handoff panel, enters
	// the code, confirms, then presses Done.
	person := make(chan error, 1)
	go func() {
		tctx, cancel := context.WithTimeout(page.Context(), time.Minute)
		defer cancel()
		person <- chromedp.Do(tctx,
			chromedp.WaitVisible(chromedp.CSS(`dialog.pling-ui[data-pling-ui=handoff]`)),
			chromedp.WaitVisible(chromedp.CSS(`#tds-code`)),
			chromedp.SendKeys(chromedp.CSS(`#tds-code`), "123456"),
			chromedp.Click(chromedp.CSS(`#tds-confirm`)),
			chromedp.Click(chromedp.CSS(`dialog.pling-ui[data-pling-ui=handoff] [data-pling-ui-answer=yes]`)),
		)
	}()
	d.say("  invoke checkout → the page hands off to a person (3-D Secure); the person enters the code and presses Done")
	res, err = c.Invoke(ctx, "checkout", map[string]any{})
	if perr := <-person; perr != nil {
		return fmt.Errorf("the person could not complete the handoff: %w", perr)
	}
	if err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	met := 0
	if res.Evidence != nil {
		for _, e := range res.Evidence.Expectations {
			if e.Met {
				met++
			}
		}
		d.say("  checkout → ok: handoff %q, %d expectation(s) met, value %s", res.Evidence.Handoff, met, compactJSON(res.Value))
	}
	if res.Evidence == nil || res.Evidence.Handoff != "done" {
		return errors.New("checkout did not report a completed handoff")
	}
	return nil
}

func (d *demo) latencies() {
	med := func(name string) time.Duration {
		v := append([]time.Duration(nil), d.lat[name]...)
		if len(v) == 0 {
			return 0
		}
		sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		return v[len(v)/2]
	}
	inPage := med("describe in page")
	d.say("\nper-step latency (median), as ratios to the in-page call:")
	for _, name := range []string{"describe in page", "describe via CDP", "tools/list via MCP"} {
		m := med(name)
		ratio := "-"
		if inPage > 0 {
			ratio = fmt.Sprintf("%.1f×", float64(m)/float64(inPage))
		}
		d.say("  %-20s %9s  %s", name, msDur(m), ratio)
	}
}

func msDur(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func compactJSON(b json.RawMessage) string {
	if len(b) == 0 {
		return "null"
	}
	if len(b) > 120 {
		return string(b[:120]) + "…"
	}
	return string(b)
}

func stateChange(o *schema.SurfaceObservation, key string) string {
	if o == nil {
		return "?"
	}
	if c, ok := o.States[key]; ok {
		return fmt.Sprintf("%v → %v", c.Before, c.After)
	}
	return "unchanged"
}
