package gojs_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/internal/testing/syncbuf"
	"github.com/pling-go/pling/wasm/gojs"
)

// TestRun runs modules to their end and checks exit code and output.
func TestRun(t *testing.T) {
	_, zone := time.Now().Zone()
	tests := []struct {
		name       string
		cfg        gojs.Config
		code       int
		stdout     string   // exact
		stderrHas  []string // substrings
		stdoutHas  []string
		stdoutMiss []string
	}{
		{
			name:      "hello via fmt.Println",
			cfg:       gojs.Config{Args: []string{"module", "hello"}},
			stdout:    "hello, world\n",
			stderrHas: []string{"to stderr\n", "runtime print\n"},
		},
		{
			name:   "os.Exit(3)",
			cfg:    gojs.Config{Args: []string{"module", "exit"}},
			code:   3,
			stdout: "bye\n",
		},
		{
			name:      "panic exits 2 and reports on stderr",
			cfg:       gojs.Config{Args: []string{"module", "panic"}},
			code:      2,
			stdout:    "",
			stderrHas: []string{"panic: boom", "goroutine 1 [running]"},
		},
		{
			name: "args and env",
			cfg: gojs.Config{
				Args: []string{"prog", "argsenv", "héllo wörld"},
				Env:  map[string]string{"GREETING": "hi there", "A": "1"},
			},
			stdoutHas: []string{
				`args=["prog" "argsenv" "héllo wörld"]`,
				"GREETING=hi there\n",
				`environ=["A=1" "GREETING=hi there"]`,
				"wd=/ err=<nil>\n",
				"pid=-1 uid=-1\n",
				"readfile ENOSYS=true\n",
				fmt.Sprintf("zoneoffset=%d\n", zone),
			},
		},
		{
			name:      "default args",
			stdoutHas: []string{`args=["js"]`, "environ=[]\n"},
		},
		{
			name:   "sleep, timer, AfterFunc, goroutines and channels",
			cfg:    gojs.Config{Args: []string{"module", "sched"}},
			stdout: "slept>=20ms true\ntimer fired\nafterfunc ran\nsum of squares=2870\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr syncbuf.Buffer
			cfg := tt.cfg
			cfg.Stdout, cfg.Stderr = &stdout, &stderr
			inst := start(t, cfg)
			code, exited := inst.Exited()
			if !exited || code != tt.code {
				t.Errorf("Exited() = %d, %v; want %d, true\nstderr:\n%s", code, exited, tt.code, stderr.String())
			}
			if tt.stdoutHas == nil && stdout.String() != tt.stdout {
				t.Errorf("stdout = %q; want %q", stdout.String(), tt.stdout)
			}
			for _, s := range tt.stdoutHas {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			for _, s := range tt.stderrHas {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
				}
			}
			// An exited module refuses further calls.
			if _, err := inst.Call(context.Background(), gojs.NewFunc("f", nil), nil); !errors.Is(err, gojs.ErrExited) {
				t.Errorf("Call after exit: err = %v; want ErrExited", err)
			}
			if err := inst.RunUntilIdle(context.Background()); err != nil {
				t.Errorf("RunUntilIdle after exit: %v", err)
			}
		})
	}
}

// TestStartTooManyArgs checks the 8 KiB limit wasm_exec.js enforces.
func TestStartTooManyArgs(t *testing.T) {
	r, c := testModule(t)
	_, err := gojs.Start(context.Background(), r, c, gojs.Config{Args: []string{strings.Repeat("x", 9000)}})
	if err == nil || !strings.Contains(err.Error(), "exceeds limit") {
		t.Fatalf("Start with 9000-byte args: err = %v; want the limit error", err)
	}
}

// TestStartContextEnds: a module whose main sleeps past the deadline is not
// idle in time; Start fails with the context's error.
func TestStartContextEnds(t *testing.T) {
	r, c := testModule(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	_, err := gojs.Start(ctx, r, c, gojs.Config{Args: []string{"module", "sched"}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start: err = %v; want context.DeadlineExceeded", err)
	}
}

// TestClose: a closed instance refuses calls; Close is idempotent.
func TestClose(t *testing.T) {
	inst := start(t, gojs.Config{Args: []string{"module", "bridge"}})
	fn, err := inst.Get("__plingBridge", "echo")
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := inst.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := inst.Call(context.Background(), fn, nil, "x"); !errors.Is(err, gojs.ErrClosed) {
		t.Fatalf("Call after Close: err = %v; want ErrClosed", err)
	}
}
