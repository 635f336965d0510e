package main

import (
	"context"
	"errors"
)

// benchWazero measures the module on the wazero host.
func benchWazero(ctx context.Context, dist string, page []byte, iters int) (hostFigures, error) {
	return hostFigures{}, errors.New("the wazero host is not wired into bench yet")
}
