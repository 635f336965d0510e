package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
)

// fakeModule is a small stand-in for dist/: compressible, so every
// encoding is exercised, and quick to compress.
func fakeModule() fstest.MapFS {
	js := []byte(strings.Repeat("/* pling */ window.pling = window.pling || {};\n", 100))
	wasm := append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Repeat([]byte("pling module bytes "), 400)...)
	return fstest.MapFS{
		"pling.js":     {Data: js},
		"ui.js":        {Data: js},
		"webmcp.js":    {Data: js},
		"wasm_exec.js": {Data: js},
		"pling.wasm":   {Data: wasm},
	}
}

// TestRunServe starts the command on a free port with a module on disk,
// fetches a page and stops it.
func TestRunServe(t *testing.T) {
	srv := startCmd(t, runServe, "--addr", "127.0.0.1:0", "--dist", moduleDir(t))
	url := srv.servedURL(t)
	res, err := http.Get(url + "pling/pling.js")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("status %d", res.StatusCode)
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("exit %d; stderr: %s", code, srv.stderr.String())
	}
}

func TestRunServeFlags(t *testing.T) {
	runCmdCases(t, []cmdCase{
		{name: "help", args: []string{"serve", "-h"}, wantErrOut: []string{"--dist"}},
		{name: "bad quality", args: []string{"serve", "--brotli", "12"}, wantExit: 2, wantErrOut: []string{"--brotli must be 0–11"}},
		{name: "dist without module", args: []string{"serve", "--dist", t.TempDir()}, wantExit: 2, wantErrOut: []string{"run make wasm"}},
		{name: "arguments", args: []string{"serve", "extra"}, wantExit: 2, wantErrOut: []string{"unexpected arguments"}},
	})
}
