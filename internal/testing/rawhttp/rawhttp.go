// Package rawhttp holds HTTP clients the standard client cannot be made to
// be, for tests: a client that sends its whole body before it reads.
package rawhttp

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"
)

// SendWholeThenRead is a client that sends its whole body before it reads
// (as Python's urllib does): the request head and size bytes of body on a
// raw connection, then the answer. It returns the status, or the error
// (a connection reset) that stood in its way.
func SendWholeThenRead(t *testing.T, addr, path, headers string, size int) (int, error) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n", path, addr, size, headers)
	if _, err := c.Write([]byte(head)); err != nil {
		return 0, err
	}
	chunk := bytes.Repeat([]byte{' '}, 1<<20)
	for sent := 0; sent < size; sent += len(chunk) {
		if _, err := c.Write(chunk[:min(len(chunk), size-sent)]); err != nil {
			return 0, fmt.Errorf("writing the body at %d bytes: %w", sent, err)
		}
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}
