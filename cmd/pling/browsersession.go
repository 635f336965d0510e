package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strings"
	"syscall"
	"time"

	"github.com/pling-go/pling/agent"
	"github.com/pling-go/pling/agent/cdp"
)

// A browser session keeps one browser tab across CLI calls, so that
// `pling invoke … cart.add` and then `pling invoke … checkout` act on the
// same page: `pling session start URL` opens the tab in a browser that
// outlives the command and writes where it is to a session file; then
// --session-name NAME (or $PLING_CDP with $PLING_CDP_TAB) attaches to
// that tab. Not to be mixed up with the Pling session token (--session).

func init() {
	register(command{"session", "keep one browser tab across commands: session start URL, session stop", runSession})
}

// browserSessionFile is what pling session start writes: where the
// browser and its tab are. It holds no secret, but the endpoint lets any
// local process drive the browser, so it is written 0600.
type browserSessionFile struct {
	Name        string `json:"name"`
	CDP         string `json:"cdp"`
	Tab         string `json:"tab"`
	URL         string `json:"url"`
	Headed      bool   `json:"headed,omitempty"`
	UserDataDir string `json:"userDataDir,omitempty"`
	// OwnDir is true when start made the profile (and stop removes it).
	OwnDir bool `json:"ownDir,omitempty"`
	// PID is the browser's process, which stop ends.
	PID int `json:"pid,omitempty"`
}

var sessionNameRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// sessionsDir is where session files live: $XDG_CACHE_HOME/pling/sessions
// (os.UserCacheDir).
func sessionsDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "pling", "sessions"), nil
}

func sessionPath(name string) (string, error) {
	if !sessionNameRE.MatchString(name) || name == "." || name == ".." {
		return "", &targetError{fmt.Sprintf("session name %q: use 1–64 of [A-Za-z0-9._-]", name)}
	}
	d, err := sessionsDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, name+".json"), nil
}

func readBrowserSession(name string) (*browserSessionFile, error) {
	p, err := sessionPath(name)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no browser session %q: start one with pling session start --name %s URL", name, name)
	}
	if err != nil {
		return nil, err
	}
	var s browserSessionFile
	if len(b) > 64<<10 || json.Unmarshal(b, &s) != nil || s.CDP == "" || s.Tab == "" {
		return nil, fmt.Errorf("session file %s is not one pling session start wrote", p)
	}
	return &s, nil
}

// writeBrowserSession writes the session file start leaves for the
// commands that attach to the session, making its directory first.
func writeBrowserSession(path string, s *browserSessionFile) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// addBrowserSessionFlag registers --session-name on a command.
func addBrowserSessionFlag(fl *flag.FlagSet) *string {
	return fl.String("session-name", "", "work in the tab of this browser session (pling session start); TARGET may then be left out")
}

// sessionArgs puts the empty target ("stay on the tab's page") in front
// of the positional arguments when a browser session is named and TARGET
// was left out: want is how many the command takes with TARGET.
func sessionArgs(name string, pos []string, want int) []string {
	if name != "" && len(pos) == want-1 {
		return append([]string{""}, pos...)
	}
	return pos
}

// openTarget is transportFor, or with a browser session name the tab of
// that session (navigated to target first when target is a URL it does
// not show).
func openTarget(ctx context.Context, name, target string) (agent.Transport, error) {
	if name == "" {
		return transportFor(ctx, target)
	}
	s, err := readBrowserSession(name)
	if err != nil {
		return nil, err
	}
	return attachTab(ctx, s.CDP, s.Tab, target)
}

// attachTab drives an existing tab of the browser at endpoint; when url is
// set and the tab shows another page, it goes there first. The page must
// speak Pling.
func attachTab(ctx context.Context, endpoint, tab, url string) (*cdp.Page, error) {
	if url != "" && !isPageURL(url) {
		return nil, &targetError{fmt.Sprintf("%s: with a browser session, TARGET is a page URL or left out", url)}
	}
	p, err := cdp.Start(ctx, "", cdp.Options{Remote: endpoint, AttachTab: tab, Progress: progressOut})
	if err != nil {
		return nil, fmt.Errorf("the browser session's tab: %w (is the session still running? pling session start)", err)
	}
	info, err := p.Info(ctx)
	if err == nil && url != "" && strings.SplitN(info.URL, "#", 2)[0] != strings.SplitN(url, "#", 2)[0] {
		info, err = p.Navigate(ctx, url)
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	if !info.Pling {
		p.Close()
		return nil, fmt.Errorf("%s (%q) does not speak Pling: no window.pling (the page must load pling.js)", info.URL, info.Title)
	}
	return p, nil
}

func runSession(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	usage := func() {
		fmt.Fprintln(stderr, "Usage: pling session start [--name NAME] [--headed] [--user-data-dir DIR] URL")
		fmt.Fprintln(stderr, "       pling session stop [--name NAME]")
		fmt.Fprintln(stderr, "start opens URL in a browser that stays after the command, prints")
		fmt.Fprintln(stderr, "PLING_CDP=… and PLING_CDP_TAB=… (eval \"$(pling session start URL)\" exports them),")
		fmt.Fprintln(stderr, "and remembers the tab under NAME (default \"default\"): pling describe/invoke/mcp")
		fmt.Fprintln(stderr, "--session-name NAME, or the two variables, then work in that one tab. stop closes it.")
	}
	if len(args) == 0 {
		usage()
		return 2
	}
	switch args[0] {
	case "start":
		return sessionStart(ctx, args[1:], stdout, stderr)
	case "stop":
		return sessionStop(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		usage()
		return 0
	}
	fmt.Fprintf(stderr, "pling session: unknown subcommand %q\n", args[0])
	usage()
	return 2
}

func sessionStart(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := newFlags("session start", stderr,
		"Usage: pling session start [--name NAME] [--headed] [--user-data-dir DIR] URL",
		"Opens URL in a browser that outlives the command and prints its handle (PLING_CDP, PLING_CDP_TAB).")
	name := fl.String("name", "default", "the session's name, for --session-name")
	headed := fl.Bool("headed", false, "show the browser window (needs a display), so a person sees approvals and handoffs")
	userDataDir := fl.String("user-data-dir", "", "keep the browser profile (logins, cookies) in this directory (default: a fresh one, removed by stop)")
	pos, exit, ok := parseFlags(fl, args)
	if !ok {
		return exit
	}
	if len(pos) != 1 || !isPageURL(pos[0]) {
		return usageError(fl, stderr, "give one page URL")
	}
	path, err := sessionPath(*name)
	if err != nil {
		fmt.Fprintf(stderr, "pling session start: %v\n", err)
		return 2
	}
	if old, err := readBrowserSession(*name); err == nil {
		fmt.Fprintf(stderr, "pling session start: session %q exists (browser at %s): pling session stop --name %s first\n", *name, old.CDP, *name)
		return 1
	}
	s := browserSessionFile{Name: *name, URL: pos[0], Headed: *headed, UserDataDir: *userDataDir}
	if s.UserDataDir == "" {
		dir, err := os.MkdirTemp("", "pling-session-"+*name+"-")
		if err != nil {
			fmt.Fprintf(stderr, "pling session start: %v\n", err)
			return 1
		}
		s.UserDataDir, s.OwnDir = dir, true
	}
	p, err := cdp.Start(ctx, pos[0], cdp.Options{Headed: *headed, UserDataDir: s.UserDataDir, KeepOpen: true, Progress: stderr})
	if err != nil {
		if s.OwnDir {
			os.RemoveAll(s.UserDataDir)
		}
		fmt.Fprintf(stderr, "pling session start: %v\n", err)
		return 1
	}
	s.CDP, s.Tab, s.PID = p.Endpoint(), p.TabID(), p.BrowserPID()
	info, _ := p.Info(ctx)
	p.Close() // the browser stays (KeepOpen)
	if s.CDP == "" || s.Tab == "" {
		fmt.Fprintln(stderr, "pling session start: the browser gave no debugging endpoint")
		return 1
	}
	if err := writeBrowserSession(path, &s); err != nil {
		fmt.Fprintf(stderr, "pling session start: writing %s: %v\n", path, err)
		stopBrowser(&s)
		return 1
	}
	pl := "speaks Pling"
	if !info.Pling {
		pl = "does not speak Pling"
	}
	fmt.Fprintf(stderr, "pling session: %q on %s (%q, %s); use --session-name %s, or export the lines below; stop with pling session stop --name %s\n",
		*name, info.URL, info.Title, pl, *name, *name)
	fmt.Fprintf(stdout, "PLING_CDP=%s; export PLING_CDP\nPLING_CDP_TAB=%s; export PLING_CDP_TAB\n", s.CDP, s.Tab)
	return 0
}

func sessionStop(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := newFlags("session stop", stderr, "Usage: pling session stop [--name NAME]", "Closes the session's browser and forgets it.")
	name := fl.String("name", "default", "the session's name")
	if exit, ok := parseNoArgs(fl, args, stderr); !ok {
		return exit
	}
	s, err := readBrowserSession(*name)
	if err != nil {
		fmt.Fprintf(stderr, "pling session stop: %v\n", err)
		return 1
	}
	if err := stopBrowser(s); err != nil {
		fmt.Fprintf(stderr, "pling session stop: %v (already gone?)\n", err)
	}
	if s.OwnDir && strings.Contains(filepath.Base(s.UserDataDir), "pling-session-") {
		// The browser may take a moment to let go of its profile.
		for i := 0; i < 20 && os.RemoveAll(s.UserDataDir) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	}
	path, _ := sessionPath(*name)
	_ = os.Remove(path)
	fmt.Fprintf(stdout, "pling session: %q stopped\n", *name)
	return 0
}

// stopBrowser ends the session's browser: SIGTERM, which Chromium takes
// as a request to close, to the process start recorded — only while that
// process is still the browser with the session's profile (a pid the
// system gave to another process since is left alone).
func stopBrowser(s *browserSessionFile) error {
	if s.PID <= 0 {
		return errors.New("the session file names no browser process")
	}
	if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.PID)); err == nil {
		if !strings.Contains(string(cmd), "--user-data-dir="+s.UserDataDir) {
			return fmt.Errorf("process %d is not the session's browser any more", s.PID)
		}
	} else if goruntime.GOOS == "linux" {
		return fmt.Errorf("no process %d", s.PID)
	}
	pr, err := os.FindProcess(s.PID)
	if err != nil {
		return err
	}
	if err := pr.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	for i := 0; i < 50; i++ { // up to 5 s for the browser to exit
		if pr.Signal(syscall.Signal(0)) != nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return pr.Kill()
}
