// Command gen writes the artifacts generated from the Go wire types of
// package schema: surface.schema.json, the TypeScript declarations
// (docs/protocol.md §6) and the Go JSON encoders. go generate runs it in the schema
// directory:
//
//	go run -tags plinggen ./internal/gen -schema surface.schema.json -dts ../js-shim/pling.d.ts -codec ../internal/wire/encode_gen.go -page pagespec/decode_gen.go -request ../internal/wire/request_gen.go
//
// The plinggen tag leaves the generated encoders and request decoder out
// of their packages, so the generator builds even when they are stale (a
// field removed).
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
	codecOut := flag.String("codec", "", "write the Go JSON encoders of package internal/wire to `file`")
	pageOut := flag.String("page", "", "write the Go decoders of package schema/pagespec to `file`")
	reqOut := flag.String("request", "", "write the Go request member decoder of package internal/wire to `file`")
	dir := flag.String("dir", ".", "the `directory` of package schema, whose doc comments become descriptions")
	flag.Parse()
	if flag.NArg() > 0 || (*schemaOut == "" && *dtsOut == "" && *codecOut == "" && *pageOut == "" && *reqOut == "") {
		fmt.Fprintln(os.Stderr, "usage: gen [-dir dir] [-schema file] [-dts file] [-codec file] [-page file] [-request file]")
		flag.PrintDefaults()
		os.Exit(2)
	}
	for _, out := range []struct {
		path string
		gen  func(string) ([]byte, error)
	}{
		{*schemaOut, artifact.Schema},
		{*dtsOut, artifact.DTS},
		{*codecOut, func(string) ([]byte, error) { return artifact.Codec() }},
		{*pageOut, func(string) ([]byte, error) { return artifact.PageDecoders() }},
		{*reqOut, func(string) ([]byte, error) { return artifact.RequestDecoder() }},
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
