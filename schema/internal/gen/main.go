// Command gen writes the schema artifacts generated from the Go wire types
// of package schema: surface.schema.json and the TypeScript declarations
// (PLING.md §6). go generate runs it in the schema directory:
//
//	go run ./internal/gen -schema surface.schema.json -dts ../js-shim/pling.d.ts
//
// The generation itself is in package artifact, which the drift test calls
// in-process; this command only writes the files.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pling-go/pling/schema/internal/artifact"
)

func main() {
	schemaOut := flag.String("schema", "", "write the JSON Schema to `file`")
	dtsOut := flag.String("dts", "", "write the TypeScript declarations to `file`")
	dir := flag.String("dir", ".", "the `directory` of package schema, whose doc comments become descriptions")
	flag.Parse()
	if flag.NArg() > 0 || (*schemaOut == "" && *dtsOut == "") {
		fmt.Fprintln(os.Stderr, "usage: gen [-dir dir] [-schema file] [-dts file]")
		flag.PrintDefaults()
		os.Exit(2)
	}
	for _, out := range []struct {
		path string
		gen  func(string) ([]byte, error)
	}{
		{*schemaOut, artifact.Schema},
		{*dtsOut, artifact.DTS},
	} {
		if out.path == "" {
			continue
		}
		if err := write(out.path, out.gen, *dir); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}

func write(path string, gen func(string) ([]byte, error), dir string) error {
	b, err := gen(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
