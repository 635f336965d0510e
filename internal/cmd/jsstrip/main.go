// Command jsstrip writes each script without its whole-line comments,
// blank lines and indentation (package internal/jsstrip) into a
// directory: jsstrip DIR FILE...
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pling-go/pling/internal/jsstrip"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: jsstrip DIR FILE...")
		os.Exit(2)
	}
	for _, f := range os.Args[2:] {
		if err := strip(f, filepath.Join(os.Args[1], filepath.Base(f))); err != nil {
			fmt.Fprintf(os.Stderr, "jsstrip: %s: %v\n", f, err)
			os.Exit(1)
		}
	}
}

func strip(in, out string) error {
	src, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	s, err := jsstrip.Strip(string(src))
	if err != nil {
		return err
	}
	return os.WriteFile(out, []byte(s), 0o644)
}
