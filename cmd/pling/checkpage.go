package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"
)

// checkPage asks for a URL target once before a browser opens it, so that
// a wrong URL is reported as what it is — "HTTP 404 at URL", "not an HTML
// page: content-type … at URL" — rather than, five seconds later, as a
// page that "does not speak Pling". A server that cannot be reached from
// here is left to the browser (which may see another network, $PLING_CDP),
// and so is one that refuses a plain GET with 405.
func checkPage(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return &targetError{fmt.Sprintf("%s: not a URL: %v (%s)", url, err, acceptedTargets)}
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1")
	resp, err := checkClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	if resp.StatusCode == http.StatusMethodNotAllowed {
		return nil
	}
	if resp.StatusCode >= 400 {
		return &pageError{fmt.Sprintf("HTTP %d at %s: no page there to describe", resp.StatusCode, url)}
	}
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if mt != "text/html" && mt != "application/xhtml+xml" {
		if ct == "" {
			ct = "none"
		}
		return &pageError{fmt.Sprintf("not an HTML page: content-type %s at %s (a page loads pling.js from a <script> tag)", ct, url)}
	}
	return nil
}

// checkClient follows redirects (as the browser would) and sends no
// cookies; its Transport is the default one, proxies included.
var checkClient = &http.Client{
	CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("more than 10 redirects")
		}
		return nil
	},
}

// pageError is a URL target whose server answered, but not with a page:
// the command fails with exit 1, as for a page that refused.
type pageError struct{ msg string }

func (e *pageError) Error() string { return e.msg }
