package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pling-go/pling/internal/testing/syncbuf"
)

// bgCmd is a command (pling serve, authority, gateway) running in a
// goroutine as a server runs, until the test stops it or ends.
type bgCmd struct {
	stdout, stderr syncbuf.Buffer // what the command printed so far
	out            *bufio.Scanner // the command's stdout, line by line
	done           chan int       // the exit status
	copied         chan struct{}  // closed when all of stdout is in c.stdout
	copying        bool           // readUntil has begun copying
	cancel         context.CancelFunc
}

// startCmd runs cmd with args in a goroutine. When the test ends the
// command is stopped and waited for.
func startCmd(t *testing.T, cmd func(context.Context, []string, io.Writer, io.Writer) int, args ...string) *bgCmd {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	c := &bgCmd{out: bufio.NewScanner(pr), done: make(chan int, 1), copied: make(chan struct{}), cancel: cancel}
	go func() {
		code := cmd(ctx, args, pw, &c.stderr)
		pw.Close()
		c.done <- code
	}()
	t.Cleanup(func() {
		cancel()
		go io.Copy(io.Discard, pr) // unblocks a command still printing
		<-c.done
	})
	return c
}

// readUntil reads stdout line by line until found says a line is the one
// sought, then copies the rest of it into c.stdout in the background. The
// test fails when stdout ends first.
func (c *bgCmd) readUntil(t *testing.T, found func(line string) bool) {
	t.Helper()
	for c.out.Scan() {
		fmt.Fprintln(&c.stdout, c.out.Text())
		if found(c.out.Text()) {
			c.copying = true
			go func() {
				for c.out.Scan() {
					fmt.Fprintln(&c.stdout, c.out.Text())
				}
				close(c.copied)
			}()
			return
		}
	}
	t.Fatalf("the command's output ended before the line sought; stdout:\n%s\nstderr:\n%s", c.stdout.String(), c.stderr.String())
}

var urlRE = regexp.MustCompile(`http://\S+`)

// url returns the first http:// URL the command prints (its address).
func (c *bgCmd) url(t *testing.T) string {
	t.Helper()
	var u string
	c.readUntil(t, func(line string) bool {
		u = urlRE.FindString(line)
		return u != ""
	})
	return u
}

// stop ends the command as a signal would and returns its exit status,
// once all of its output is in c.stdout (when readUntil found its line);
// the test fails when the command does not exit within 15 s.
func (c *bgCmd) stop(t *testing.T) int {
	t.Helper()
	c.cancel()
	select {
	case code := <-c.done:
		c.done <- code // for the cleanup's wait
		if c.copying {
			<-c.copied
		}
		return code
	case <-time.After(15 * time.Second):
		t.Fatal("the command did not exit")
		return 0
	}
}

// servePrefix begins the line where pling serve prints its address.
const servePrefix = "pling serve: http://"

// servedURL returns the address pling serve printed (with its trailing
// slash), reading on to it when it is not yet read.
func (c *bgCmd) servedURL(t *testing.T) string {
	t.Helper()
	if !c.copying {
		c.readUntil(t, func(line string) bool { return strings.HasPrefix(line, servePrefix) })
	}
	for _, line := range strings.Split(c.stdout.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, servePrefix); ok {
			return "http://" + strings.Fields(rest)[0]
		}
	}
	t.Fatalf("pling serve printed no address; stderr: %s", c.stderr.String())
	return ""
}
