package httpcheck

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"

	"github.com/andybalholm/brotli"
)

// Encodings are the Accept-Encoding headers a server of precompressed
// files (plinghttp's handler, the demo site) is asked with, and the
// content coding it must answer in when it holds a brotli and a gzip copy
// ("" is the file as it is). internal/precompress's Negotiate decides for
// both servers, so both are held to the one table.
var Encodings = []struct{ Name, Accept, Want string }{
	{Name: "brotli", Accept: "br", Want: "br"},
	{Name: "brotli over gzip", Accept: "gzip, deflate, br", Want: "br"},
	{Name: "browser", Accept: "gzip, deflate, br, zstd", Want: "br"},
	{Name: "gzip only", Accept: "gzip", Want: "gzip"},
	{Name: "none", Accept: "", Want: ""},
	{Name: "br refused", Accept: "br;q=0, gzip", Want: "gzip"},
	{Name: "gzip preferred by q", Accept: "br;q=0.5, gzip;q=0.9", Want: "gzip"},
	{Name: "star", Accept: "*", Want: "br"},
	{Name: "identity only", Accept: "identity", Want: ""},
	{Name: "unknown only", Accept: "zstd", Want: ""},
	{Name: "case and spaces", Accept: " GZIP ; Q=1 ", Want: "gzip"},
}

// Decode returns b decoded from the content coding encoding ("br",
// "gzip", or "" for b as it is); another coding or bytes that do not
// decode end the test.
func Decode(t testing.TB, encoding string, b []byte) []byte {
	t.Helper()
	var r io.Reader
	switch encoding {
	case "":
		return b
	case "br":
		r = brotli.NewReader(bytes.NewReader(b))
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("decoding gzip: %v", err)
		}
		r = zr
	default:
		t.Fatalf("unexpected content coding %q", encoding)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decoding %s: %v", encoding, err)
	}
	return out
}
