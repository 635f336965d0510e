package conform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pling-go/pling/agent/cdp"
	"github.com/pling-go/pling/internal/chromium"
)

// DefaultChromium is the browser binary the Chromium host runs when neither
// Chromium.ExecPath nor $PLING_CHROMIUM names one (chromium.Default).
const DefaultChromium = chromium.Default

// chromiumPage is the page the Chromium host loads: Go's loader and the
// module, streamed and instantiated the way a site would, with readiness
// signalled through globalThis.__plingReady (docs/hosts.md §2 "Register before
// you print") as the promise window.plingReady.
const chromiumPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>pling conformance host</title><link rel="icon" href="data:,">
<script src="/wasm_exec.js"></script>
<script>
window.plingReady = new Promise((resolve, reject) => {
  globalThis.__plingReady = () => resolve(true);
  const go = new Go();
  WebAssembly.instantiateStreaming(fetch("/pling.wasm"), go.importObject)
    .then((r) => go.run(r.instance).then(() => reject(new Error("pling: the module exited"))))
    .catch((e) => reject(new Error("pling: loading pling.wasm: " + (e && e.message || e))));
});
</script></head><body></body></html>
`

// Chromium runs fixture pages in pling.wasm inside headless Chromium,
// driven over the DevTools protocol: the very file and loader a site
// serves, in a real browser. One browser and one tab serve the whole run;
// each Load is a fixture page in that tab's module.
type Chromium struct {
	// Dist is the directory with the test module (Module) and wasm_exec.js.
	Dist string
	// ExecPath is the browser binary; default $PLING_CHROMIUM, else
	// DefaultChromium.
	ExecPath string
	// Timeout bounds each evaluation in the page (default 30s) and, three
	// times over, the start of the browser and the module.
	Timeout time.Duration

	mu      sync.Mutex
	started bool
	tab     context.Context
	stop    []func() // run in reverse order by Close
	console *consoleLog
}

// Name implements Host.
func (c *Chromium) Name() string { return "chromium" }

// Browser returns the browser binary the host runs.
func (c *Chromium) Browser() string { return chromium.Path(c.ExecPath) }

func (c *Chromium) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return 30 * time.Second
}

// Start starts the server and the browser and loads the module, unless
// that was done already; Load calls it. Calling it first gives one clear
// error instead of one per case.
func (c *Chromium) Start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return nil
	}
	err := c.start()
	if err != nil {
		c.shutdown()
		return fmt.Errorf("chromium host: %w", err)
	}
	c.started = true
	return nil
}

func (c *Chromium) start() error {
	bin := c.Browser()
	if st, err := os.Stat(bin); err != nil || st.IsDir() {
		return fmt.Errorf("no browser at %s (install it: apt-get install chromium; or name another binary with --chromium or $PLING_CHROMIUM)", bin)
	}
	wasm, err := os.ReadFile(filepath.Join(c.Dist, Module))
	if err != nil {
		return fmt.Errorf("%w (make wasm builds it)", err)
	}
	loader, err := os.ReadFile(filepath.Join(c.Dist, "wasm_exec.js"))
	if err != nil {
		return fmt.Errorf("%w (make wasm copies it)", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	serve := func(ctype string, body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ctype)
			w.Header().Set("Cache-Control", "no-store")
			w.Write(body)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", serve("text/html; charset=utf-8", []byte(chromiumPage)))
	mux.Handle("GET /pling.wasm", serve("application/wasm", wasm))
	mux.Handle("GET /wasm_exec.js", serve("text/javascript; charset=utf-8", loader))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	c.stop = append(c.stop, func() { srv.Close() })

	base, baseCancel := context.WithCancel(context.Background())
	c.stop = append(c.stop, baseCancel)
	actx, acancel, err := cdp.NewAllocator(base, bin) // a temporary profile, removed when the browser stops
	if err != nil {
		return err
	}
	c.stop = append(c.stop, acancel)
	tab, tcancel := chromedp.NewContext(actx)
	c.stop = append(c.stop, sync.OnceFunc(tcancel))
	c.tab = tab

	// The first Run starts the browser and binds it to tab, so it runs
	// without a deadline (see chromedp.Run); a watchdog bounds it instead.
	startLimit := 3 * c.timeout()
	timer := time.AfterFunc(startLimit, baseCancel)
	err = chromedp.Do(tab)
	if !timer.Stop() && err != nil {
		err = fmt.Errorf("the browser did not start in %v: %w", startLimit, err)
	}
	if err != nil {
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	c.console = watchConsole(tab)

	ctx, cancel := context.WithTimeout(tab, startLimit)
	defer cancel()
	url := "http://" + ln.Addr().String() + "/"
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		return fmt.Errorf("loading %s: %w%s", url, err, c.console.tail())
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.plingReady`, chromedp.EvalAwaitPromise)); err != nil {
		return fmt.Errorf("waiting for the module: %w%s", err, c.console.tail())
	}
	return nil
}

// shutdown releases whatever start made, newest first. c.mu is held.
func (c *Chromium) shutdown() {
	for i := len(c.stop) - 1; i >= 0; i-- {
		c.stop[i]()
	}
	c.stop, c.tab, c.console, c.started = nil, nil, nil, false
}

// Close stops the browser and the server and removes the browser's
// profile. A later Load starts them again.
func (c *Chromium) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.shutdown()
	return nil
}

// Load implements Host. The page's calls run under ctx (and each under
// the host's Timeout): cancelling it stops them.
func (c *Chromium) Load(ctx context.Context, page json.RawMessage) (Page, error) {
	if err := c.Start(); err != nil {
		return nil, err
	}
	v, err := c.eval(ctx, "load", string(page))
	if err != nil {
		return nil, err
	}
	var id int
	if err := json.Unmarshal(v, &id); err != nil {
		return nil, fmt.Errorf("chromium host: load: %w", err)
	}
	return &bridgePage{id: id, call: func(cmd map[string]any) (json.RawMessage, error) {
		return c.command(ctx, cmd)
	}}, nil
}

// command runs one of bridgePage's commands: op, page and one of text,
// bytes, ms.
func (c *Chromium) command(ctx context.Context, cmd map[string]any) (json.RawMessage, error) {
	op, _ := cmd["op"].(string)
	args := []any{cmd["page"]}
	if t, ok := cmd["text"]; ok {
		args = append(args, t)
	}
	if b, ok := cmd["bytes"]; ok {
		args = append(args, b)
	}
	if ms, ok := cmd["ms"]; ok {
		args = append(args, ms)
	}
	return c.eval(ctx, op, args...)
}

// fixtureOps are the functions of __plingBridge.fixture.
var fixtureOps = map[string]bool{
	"load": true, "handle": true, "advance": true, "calls": true,
	"declare": true, "dispose": true, "callTool": true, "close": true,
}

// eval calls __plingBridge.fixture[op](args…) in the page and returns its
// value as JSON. Every argument enters the expression as a JSON literal
// (json.Marshal escapes U+2028 and U+2029 too, so each is a valid JS
// literal), never as spliced text; a []byte enters as a Uint8Array made
// from its base64 literal, so bytes that are not UTF-8 arrive unchanged.
// A thrown error, or a returned {error}, is an error, as the Node host
// reports them.
func (c *Chromium) eval(ctx context.Context, op string, args ...any) (json.RawMessage, error) {
	if !fixtureOps[op] {
		return nil, fmt.Errorf("chromium host: unknown op %q", op)
	}
	lits := make([]string, len(args))
	for i, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("chromium host: %s: %w", op, err)
		}
		lits[i] = string(b)
		if _, ok := a.([]byte); ok { // json.Marshal gave a base64 string literal
			lits[i] = `Uint8Array.from(atob(` + string(b) + `), (c) => c.charCodeAt(0))`
		}
	}
	expr := `(() => {
  try {
    const v = globalThis.__plingBridge.fixture.` + op + `(` + strings.Join(lits, ", ") + `);
    if (v && typeof v === "object" && v.error) return {ok: false, error: String(v.error)};
    return {ok: true, value: v === undefined ? null : v};
  } catch (e) {
    return {ok: false, error: String(e && e.message || e)};
  }
})()`

	c.mu.Lock()
	tab, console := c.tab, c.console
	c.mu.Unlock()
	if tab == nil {
		return nil, errors.New("chromium host: closed")
	}
	tctx, cancel := context.WithTimeout(tab, c.timeout())
	defer cancel()
	stop := context.AfterFunc(ctx, cancel) // the caller's cancellation too
	defer stop()

	type answer struct {
		OK    bool            `json:"ok"`
		Value json.RawMessage `json:"value"`
		Error string          `json:"error"`
	}
	r, err := chromedp.Run(tctx, chromedp.Evaluate[answer](expr))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, fmt.Errorf("chromium host: fixture.%s took longer than %v%s", op, c.timeout(), console.tail())
		}
		return nil, fmt.Errorf("chromium host: fixture.%s: %w%s", op, err, console.tail())
	}
	if !r.OK {
		return nil, errors.New(r.Error)
	}
	return r.Value, nil
}

// consoleLog keeps the page's last console messages, for errors.
type consoleLog struct {
	mu    sync.Mutex
	lines []string
}

func watchConsole(tab context.Context) *consoleLog {
	l := &consoleLog{}
	msgs := chromedp.Console(tab)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			l.mu.Lock()
			l.lines = append(l.lines, m.String())
			if len(l.lines) > 20 {
				l.lines = l.lines[len(l.lines)-20:]
			}
			l.mu.Unlock()
		}
	}()
	return l
}

// tail is the recent console output as an error suffix, or "".
func (l *consoleLog) tail() string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) == 0 {
		return ""
	}
	return "\nbrowser console:\n  " + strings.Join(l.lines, "\n  ")
}
