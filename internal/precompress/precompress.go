// Package precompress is what the two servers of Pling's page files share
// (package plinghttp, what any Go site mounts, and the pling serve site
// server): the content type of a file by its name, its gzip and brotli
// bodies computed once, the content coding a request accepts, the
// If-None-Match check and the answer with the picked bytes. One copy
// serves both, so their headers cannot drift apart.
package precompress

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"math/bits"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/andybalholm/brotli"
)

// compressions counts the bodies Gzip and Brotli compressed in this
// process (Compressions).
var compressions atomic.Int64

// Compressions is how many bodies this process has compressed so far: a
// server that starts from the forms make wasm built compresses none.
func Compressions() int64 { return compressions.Load() }

// Built returns the brotli and gzip forms of a file that dir holds beside
// it, as make wasm writes them (NAME.br, NAME.gz), so that a server
// answers at once instead of compressing the module when it starts. A
// form is kept only when it decodes to raw exactly (a stale one, left
// from an earlier build, is nil) and is smaller than raw. Decoding costs
// a fraction of compressing: the module's brotli at quality 11 takes tens
// of seconds, its decoding milliseconds.
func Built(dir fs.FS, name string, raw []byte) (br, gz []byte) {
	check := func(enc []byte, open func(io.Reader) (io.Reader, error)) []byte {
		if enc == nil {
			return nil
		}
		r, err := open(bytes.NewReader(enc))
		if err != nil {
			return nil
		}
		// One byte past raw's length shows a longer body.
		dec, err := io.ReadAll(io.LimitReader(r, int64(len(raw))+1))
		if err != nil || !bytes.Equal(dec, raw) {
			return nil
		}
		return Smaller(enc, raw)
	}
	read := func(n string) []byte {
		b, _ := fs.ReadFile(dir, n) // absent or unreadable: none
		return b
	}
	br = check(read(name+".br"), func(r io.Reader) (io.Reader, error) { return brotli.NewReader(r), nil })
	gz = check(read(name+".gz"), func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) })
	return br, gz
}

// BigFile is the size above which a file counts as big: gzip uses its
// default level and the servers pick a faster brotli quality.
const BigFile = 1 << 20

// ContentType is the Content-Type of a served file, by its extension.
func ContentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".wasm":
		return "application/wasm"
	case ".json":
		return "application/json"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".txt", ".md":
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// Compressible reports whether a file of that Content-Type gains from a
// content coding.
func Compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") || ctype == "application/wasm" ||
		ctype == "application/json" || ctype == "image/svg+xml"
}

// Gzip compresses b; level 9 gains under 1% over the default on
// pling.wasm for twice the time, so big files get the default.
func Gzip(b []byte) []byte {
	compressions.Add(1)
	var out bytes.Buffer
	level := gzip.BestCompression
	if len(b) > BigFile {
		level = gzip.DefaultCompression
	}
	w, _ := gzip.NewWriterLevel(&out, level)
	_, _ = w.Write(b)
	_ = w.Close()
	return out.Bytes()
}

// Brotli compresses b, in chunks so that a cancelled server stops a long
// background compression; it returns nil when ctx ends first.
func Brotli(ctx context.Context, b []byte, quality int) []byte {
	compressions.Add(1)
	var out bytes.Buffer
	// The window need not be larger than the file; a small one makes
	// quality 11 fast on small files.
	lgwin := min(max(bits.Len(uint(len(b))), 10), 24)
	w := brotli.NewWriterOptions(&out, brotli.WriterOptions{Quality: quality, LGWin: lgwin})
	for len(b) > 0 {
		if ctx.Err() != nil {
			return nil
		}
		n := min(len(b), 256<<10)
		_, _ = w.Write(b[:n])
		b = b[n:]
	}
	_ = w.Close()
	return out.Bytes()
}

// Smaller keeps a compressed body only when it saves bytes.
func Smaller(c, raw []byte) []byte {
	if c == nil || len(c) >= len(raw) {
		return nil
	}
	return c
}

// Negotiate picks the content coding from Accept-Encoding (RFC 9110
// §12.5.3): the highest q above zero among those available, brotli before
// gzip before identity on a tie. identity not named is acceptable but
// least preferred.
func Negotiate(accept string, haveBr, haveGzip bool) string {
	q := map[string]float64{}
	star := -1.0
	for _, part := range strings.Split(accept, ",") {
		name, params, _ := strings.Cut(part, ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		v := 1.0
		for _, p := range strings.Split(params, ";") {
			k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
					v = f
				}
			}
		}
		if name == "*" {
			star = v
		} else {
			q[name] = v
		}
	}
	weight := func(name string) float64 {
		if v, ok := q[name]; ok {
			return v
		}
		if star >= 0 {
			return star
		}
		if name == "identity" {
			return 0.0001
		}
		return 0
	}
	type option struct {
		name string
		ok   bool
	}
	best, bestQ := "identity", weight("identity")
	for _, o := range []option{{"gzip", haveGzip}, {"br", haveBr}} {
		if w := weight(o.name); o.ok && w > 0 && w >= bestQ {
			best, bestQ = o.name, w
		}
	}
	return best
}

// NoneMatch reports whether If-None-Match names etag (weak comparison, as
// RFC 9110 §13.1.2 asks for this header).
func NoneMatch(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// Write answers r with one representation: its ETag (quoted) and, when
// encoding is not "", its Content-Encoding; then 304 when If-None-Match
// names the ETag, else 200 with Content-Length and, unless the method is
// HEAD, body. The headers the caller set before stay.
func Write(w http.ResponseWriter, r *http.Request, body []byte, encoding, etag string) {
	h := w.Header()
	h.Set("ETag", etag)
	if encoding != "" {
		h.Set("Content-Encoding", encoding)
	}
	if NoneMatch(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
