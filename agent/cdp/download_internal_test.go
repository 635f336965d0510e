package cdp

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
)

// TestDownloadEndsReachTheTaker: a download's end counts whenever it
// comes, in the order the browser's and the tab's listeners deliver
// events: after TakeDownloads took the download (a small file a
// declared call builds is still on its way when the call answers), and
// before the download's beginning was heard.
func TestDownloadEndsReachTheTaker(t *testing.T) {
	const body = "id,total\n1,10\n"
	begin := &browser.EventDownloadWillBegin{GUID: "g1", URL: "blob:x", SuggestedFilename: "small.csv"}
	end := &browser.EventDownloadProgress{GUID: "g1", ReceivedBytes: float64(len(body)), State: browser.DownloadProgressStateCompleted}
	for _, tc := range []struct {
		name string
		// before the take, and once the download is taken
		before, after []any
	}{
		{"end before the take", []any{begin, end}, nil},
		{"end after the take", []any{begin}, []any{end}},
		{"end before its beginning", []any{end, begin}, nil},
		{"each event twice, from two listeners", []any{begin, begin}, []any{end, end}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Page{dlDir: t.TempDir()}
			if err := os.WriteFile(filepath.Join(p.dlDir, "g1"), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, ev := range tc.before {
				p.downloadEvent(ev)
			}
			got := make(chan []Download, 1)
			go func() { got <- p.TakeDownloads(context.Background(), 5*time.Second, 1<<20) }()
			if len(tc.after) > 0 {
				for taken := false; !taken; {
					p.dlMu.Lock()
					taken = p.dls == nil
					p.dlMu.Unlock()
					time.Sleep(time.Millisecond)
				}
				for _, ev := range tc.after {
					p.downloadEvent(ev)
				}
			}
			dls := <-got
			if len(dls) != 1 || dls[0].Failed != "" || string(dls[0].Data) != body {
				t.Fatalf("TakeDownloads = %+v, want the one file read back", dls)
			}
		})
	}
}
