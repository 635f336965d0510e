package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pling-go/pling/internal/conform"
)

func init() {
	register(command{"conform", "run conformance cases against a host", runConform})
}

func runConform(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("conform", stderr,
		"Usage: pling conform [--host H] DIR|FILE…",
		"Runs conformance cases (docs/protocol.md §7.1) and exits 1 when any case fails.",
	)
	strict := fs.Bool("strict", false, "refuse cases with unknown fields (our own suite is strict)")
	host := fs.String("host", "native", "the host to run on: native, wazero, node, chromium")
	dist := fs.String("dist", "dist", "the directory with pling.wasm and wasm_exec.js (make wasm builds it)")
	shim := fs.String("shim", "js-shim", "the js-shim directory (node host)")
	chromium := fs.String("chromium", "", "the browser binary (chromium host; default $PLING_CHROMIUM, else "+conform.DefaultChromium+")")
	pos, exit, ok := parseFlags(fs, args)
	if !ok {
		return exit
	}
	paths := pos
	if len(paths) == 0 {
		paths = []string{"e2e/conformance"}
	}
	var h conform.Host
	switch *host {
	case "native":
		h = conform.Native{}
	case "node":
		n := &conform.Node{Script: filepath.Join(*shim, "conform-host.js"), Dist: *dist}
		defer n.Close()
		h = n
	case "chromium":
		c := &conform.Chromium{Dist: *dist, ExecPath: *chromium}
		defer c.Close()
		h = c
	case "wazero":
		w := &conform.Wazero{Dist: *dist, CacheDir: wazeroCacheDir()}
		defer w.Close()
		h = w
	default:
		fmt.Fprintf(stderr, "pling conform: unknown host %q (have: native, node, chromium, wazero)\n", *host)
		return 2
	}
	load := conform.LoadDir
	if *strict {
		load = conform.LoadDirStrict
	}
	cases, err := load(paths...)
	if err != nil {
		fmt.Fprintf(stderr, "pling conform: %v\n", err)
		return 2
	}
	if len(cases) == 0 {
		fmt.Fprintf(stderr, "pling conform: no cases under %v\n", paths)
		return 2
	}
	// A host that starts something big reports a failure to start once,
	// not once per case.
	if s, ok := h.(interface{ Start() error }); ok {
		if err := s.Start(); err != nil {
			fmt.Fprintf(stderr, "pling conform: %v\n", err)
			return 2
		}
	}
	var results []*conform.Result
	for _, c := range cases {
		results = append(results, conform.Run(ctx, h, c))
	}
	if _, failed := conform.Report(stdout, h.Name(), results); failed > 0 {
		return 1
	}
	return 0
}

// wazeroCacheDir is where wazero keeps compiled code between runs.
func wazeroCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "pling", "wazero")
	}
	return ""
}
