package main

import (
	"context"
	"fmt"
	"io"

	"github.com/pling-go/pling/authority"
)

// runAuthorityMigrate is pling authority migrate status|up|down.
func runAuthorityMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := newFlags("authority migrate", stderr,
		"Usage: pling authority migrate status|up|down [--store sqlite:PATH|postgres://…]",
		"Lists the store's migrations (status), applies the pending ones (up) or rolls back the newest (down).",
	)
	store := fl.String("store", string(authority.DefaultStore), "the store: sqlite:PATH, or postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=…")
	pos, exit, ok := parseFlags(fl, args)
	if !ok {
		return exit
	}
	if len(pos) != 1 || (pos[0] != "status" && pos[0] != "up" && pos[0] != "down") {
		fmt.Fprintln(stderr, "pling authority migrate: want one of status, up, down")
		return 2
	}
	spec := authority.StoreSpec(*store)
	if _, _, err := spec.Parse(); err != nil {
		fmt.Fprintf(stderr, "pling authority migrate: --store: %v\n", err)
		return 2
	}
	if err := authority.Migrate(ctx, spec, pos[0], stdout); err != nil {
		fmt.Fprintf(stderr, "pling authority migrate: %v\n", err)
		return 1
	}
	return 0
}
