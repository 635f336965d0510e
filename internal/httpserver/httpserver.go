// Package httpserver holds the http.Server settings the pling commands
// serve with, where a command, its benchmarks and its tests must agree.
package httpserver

import (
	"net/http"
	"time"
)

// Authority is the http.Server pling authority serves h with: header,
// read, write and idle timeouts, the write timeout above the revocation
// feed's longest wait (30 s), and headers capped at 32 KiB (net/http's
// default is 1 MiB).
func Authority(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second,
		WriteTimeout: 45 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 32 << 10}
}
