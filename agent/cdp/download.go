package cdp

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// Downloads: a file the page offers (an "Export CSV" link, a blob the
// page builds, a response with Content-Disposition) reaches the agent as
// bytes, not as a path on a disk the agent cannot see. A browser pling
// launched saves downloads into a private directory of its own (0700,
// removed on Close), named by the browser's download ids, and reports
// them (Browser.downloadWillBegin, Browser.downloadProgress); TakeDownloads
// reads each file once, bounded, and deletes it. A browser pling attached
// to (a person's, or a pling session's) keeps its own download settings:
// its downloads go where it puts them.

// Download is a file the tab downloaded.
type Download struct {
	// Name is the file name the page suggested: the page's words.
	Name string
	// URL is where it came from (http(s), blob: or data:).
	URL string
	// Data is the file's bytes, nil when TooBig or Failed.
	Data []byte
	// Size is its size in bytes (at least max+1 when TooBig).
	Size int64
	// TooBig is true when it was over the caller's bound: not read.
	TooBig bool
	// Failed says why the browser did not finish it ("" when it did).
	Failed string
}

// download is one download the browser reported.
type download struct {
	guid      string
	url, name string
	state     browser.DownloadProgressState
	received  int64
	done      chan struct{} // closed when completed or canceled
}

// maxPendingDownloads bounds the downloads kept for TakeDownloads: a page
// that downloads by itself, with no action to take them, cannot fill the
// disk.
const maxPendingDownloads = 16

// maxKnownDownloads bounds the downloads remembered by guid (taken ones
// still on their way among them) and the ends kept for a beginning not
// yet reported.
const maxKnownDownloads = 64

// enableDownloads has the browser save downloads into the private
// directory and report them. Called for each tab the session listens to;
// the behaviour is the browser's, the events come to the tab's listener.
func (p *Page) enableDownloads(ctx context.Context) error {
	if p.dlDir == "" {
		return nil
	}
	on := true
	_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: p.dlDir, EventsEnabled: &on})
	return err
}

// downloadEvent records a download event, from the browser's
// connection or a tab's (each download once).
func (p *Page) downloadEvent(ev any) {
	switch e := ev.(type) {
	case *browser.EventDownloadWillBegin:
		p.noteDownload(e)
	case *browser.EventDownloadProgress:
		p.progressDownload(e)
	}
}

// noteDownload records a download that began. A navigation that became
// a download (a response with Content-Disposition) never commits: the
// main frame is no longer on its way to another page.
func (p *Page) noteDownload(e *browser.EventDownloadWillBegin) {
	if id, ok := p.mainFrame.Load().(cdproto.FrameID); ok && e.FrameID == id {
		p.navPending.Store(false)
	}
	p.dlMu.Lock()
	defer p.dlMu.Unlock()
	if _, ok := p.dlKnown[e.GUID]; ok {
		return // reported to a second tab's listener
	}
	d := &download{guid: e.GUID, url: e.URL, name: e.SuggestedFilename,
		state: browser.DownloadProgressStateInProgress, done: make(chan struct{})}
	if p.dlKnown == nil {
		p.dlKnown = map[string]*download{}
	}
	p.dlKnown[e.GUID] = d
	p.dlOrder = append(p.dlOrder, e.GUID)
	for len(p.dlOrder) > maxKnownDownloads {
		delete(p.dlKnown, p.dlOrder[0])
		p.dlOrder = p.dlOrder[1:]
	}
	if end, ok := p.dlEnded[e.GUID]; ok {
		delete(p.dlEnded, e.GUID)
		d.progress(&end)
	}
	p.dls = append(p.dls, d)
	for len(p.dls) > maxPendingDownloads {
		old := p.dls[0]
		p.dls = p.dls[1:]
		// Not on the event's goroutine: a command's answer comes on it.
		go p.dropDownload(old, old.state == browser.DownloadProgressStateInProgress)
	}
}

// progressDownload records a download's progress and its end.
func (p *Page) progressDownload(e *browser.EventDownloadProgress) {
	p.dlMu.Lock()
	defer p.dlMu.Unlock()
	d, ok := p.dlKnown[e.GUID]
	if !ok {
		// An end that overtook its beginning, kept for it (bounded: a
		// page cannot grow it by downloading).
		if e.State != browser.DownloadProgressStateInProgress && len(p.dlEnded) < maxKnownDownloads {
			if p.dlEnded == nil {
				p.dlEnded = map[string]browser.EventDownloadProgress{}
			}
			p.dlEnded[e.GUID] = *e
		}
		return
	}
	d.progress(e)
}

// progress records a download's progress and, once it ended, its end
// (once: a second listener's copy changes nothing). The caller holds
// dlMu.
func (d *download) progress(e *browser.EventDownloadProgress) {
	if d.state != browser.DownloadProgressStateInProgress {
		return
	}
	d.received = int64(e.ReceivedBytes)
	if e.State != browser.DownloadProgressStateInProgress {
		d.state = e.State
		close(d.done)
	}
}

// dropDownload deletes a download's file, cancelling it first when it is
// still on its way.
func (p *Page) dropDownload(d *download, inProgress bool) {
	if inProgress {
		ctx, cancel := context.WithTimeout(p.cur(), 2*time.Second)
		_, _ = chromedp.Call(ctx, browser.CancelDownload, browser.CancelDownloadParams{GUID: d.guid})
		cancel()
	}
	_ = os.Remove(p.downloadPath(d))
}

func (p *Page) downloadPath(d *download) string {
	// The guid is the browser's; a name that is not one path element is
	// never opened.
	if d.guid == "" || filepath.Base(d.guid) != d.guid || d.guid == "." || d.guid == ".." {
		return filepath.Join(p.dlDir, "-")
	}
	return filepath.Join(p.dlDir, d.guid)
}

// TakeDownloads gives the downloads not taken yet (those an action or
// call caused; the caller takes them after each), waiting at most wait
// for those still on their way, reads each file (at most max bytes: a
// larger one is TooBig and not read) and deletes it. A download not
// finished by then is cancelled and Failed.
func (p *Page) TakeDownloads(ctx context.Context, wait time.Duration, max int64) []Download {
	p.dlMu.Lock()
	taken := p.dls
	p.dls = nil
	p.dlMu.Unlock()
	if len(taken) == 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var out []Download
	for _, d := range taken {
		select {
		case <-d.done:
		case <-wctx.Done():
		}
		p.dlMu.Lock()
		state, received := d.state, d.received
		p.dlMu.Unlock()
		dl := Download{Name: d.name, URL: d.url, Size: received}
		switch state {
		case browser.DownloadProgressStateCompleted:
			dl.Data, dl.Size, dl.TooBig = readDownload(p.downloadPath(d), max)
			if dl.Data == nil && !dl.TooBig {
				dl.Failed = "the browser saved no file"
			}
		case browser.DownloadProgressStateCanceled:
			dl.Failed = "the browser cancelled it"
		default:
			dl.Failed = "it did not finish in " + wait.String()
		}
		p.dropDownload(d, state == browser.DownloadProgressStateInProgress)
		out = append(out, dl)
	}
	return out
}

// readDownload reads the file at path when it has at most max bytes.
func readDownload(path string, max int64) ([]byte, int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, false
	}
	if int64(len(data)) > max {
		size := int64(len(data))
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		return nil, size, true
	}
	if data == nil {
		data = []byte{}
	}
	return data, int64(len(data)), false
}

// Uploads: the file an agent gives for a file input is written into a
// private directory (0700, one directory a file, the file 0600) and set
// with DOM.setFileInputFiles. The page reads a chosen file when it wants
// (a form's submit, File.text()), so the file stays until the page
// closes, at most maxUploads of them: making room deletes the oldest.

// maxUploads bounds the files a session keeps for the page.
const maxUploads = 16

// uploadFile writes text as a file named name and returns its path.
func (p *Page) uploadFile(name, text string) (string, error) {
	if name == "" || filepath.Base(name) != name || name == "." || name == ".." || len(name) > 100 || strings.ContainsAny(name, "\x00/\\") {
		name = "upload.txt"
	}
	p.dlMu.Lock()
	defer p.dlMu.Unlock()
	if p.upDir == "" {
		dir, err := os.MkdirTemp("", "pling-uploads-")
		if err != nil {
			return "", err
		}
		p.upDir = dir
		p.mu.Lock()
		p.stop = append([]func(){func() { os.RemoveAll(dir) }}, p.stop...)
		p.mu.Unlock()
	}
	dir, err := os.MkdirTemp(p.upDir, "f")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	p.uploads = append(p.uploads, dir)
	for len(p.uploads) > maxUploads {
		os.RemoveAll(p.uploads[0])
		p.uploads = p.uploads[1:]
	}
	return path, nil
}
