// Package sitepages renders the pages of an embedded site once, when the
// site is loaded: each HTML page is a text/template that calls the
// templates of the site's layout (its shared head, header and
// navigation), so that they are written once. The result is a read-only
// file system of finished files, what a server serves as static files;
// no template runs per request. A page without template actions renders
// as itself.
//
// text/template rather than html/template: the pages and the layout are
// the site's own files, embedded in the binary, with no outside input;
// html/template would rewrite them (it drops HTML comments).
package sitepages

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"text/template"
	"time"
)

// Funcs are the functions a page and a layout may call: args turns
// "key", value, … pairs into the map a layout template is called with
// ({{template "head" (args "title" "Shop")}}); in the layout, {{.title}}
// is a value that must be given, {{index . "hint"}} one that may be
// missing ("").
var Funcs = template.FuncMap{"args": args}

func args(kv ...string) (map[string]string, error) {
	if len(kv)%2 != 0 {
		return nil, fmt.Errorf("args: %d arguments, want key and value pairs", len(kv))
	}
	m := make(map[string]string, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m, nil
}

// Render returns the files of site, each .html file executed as a
// template with the templates layout defines. A page that calls a
// template or a key the layout lacks is an error.
func Render(site fs.FS, layout string) (fs.FS, error) {
	base, err := template.New("layout").Funcs(Funcs).Option("missingkey=error").Parse(layout)
	if err != nil {
		return nil, err
	}
	files := mapFS{}
	err = fs.WalkDir(site, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(site, p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".html") {
			if b, err = renderPage(base, p, b); err != nil {
				return err
			}
		}
		files[p] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

func renderPage(base *template.Template, name string, page []byte) ([]byte, error) {
	t, err := base.Clone()
	if err != nil {
		return nil, err
	}
	if t, err = t.New(name).Parse(string(page)); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := t.Execute(&out, nil); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// mapFS is a read-only file system of files by their slash-separated
// path; a directory is every path prefix. Like embed.FS, its files have
// no modification time and mode 0444 (directories 0555).
type mapFS map[string][]byte

func (m mapFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if b, ok := m[name]; ok {
		return &file{info: info{path.Base(name), int64(len(b)), 0o444}, Reader: bytes.NewReader(b)}, nil
	}
	entries, err := m.ReadDir(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &dir{info: info{path.Base(name), 0, fs.ModeDir | 0o555}, entries: entries}, nil
}

// ReadDir lists a directory's files and directories, sorted by name.
func (m mapFS) ReadDir(name string) ([]fs.DirEntry, error) {
	prefix := name + "/"
	if name == "." {
		prefix = ""
	}
	seen := map[string]bool{}
	var entries []fs.DirEntry
	for p, b := range m {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		child, _, isDir := strings.Cut(rest, "/")
		if seen[child] {
			continue
		}
		seen[child] = true
		if isDir {
			entries = append(entries, fs.FileInfoToDirEntry(info{child, 0, fs.ModeDir | 0o555}))
		} else {
			entries = append(entries, fs.FileInfoToDirEntry(info{child, int64(len(b)), 0o444}))
		}
	}
	if entries == nil && name != "." {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// info is a file's or a directory's fs.FileInfo.
type info struct {
	name string
	size int64
	mode fs.FileMode
}

func (i info) Name() string       { return i.name }
func (i info) Size() int64        { return i.size }
func (i info) Mode() fs.FileMode  { return i.mode }
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return i.mode.IsDir() }
func (i info) Sys() any           { return nil }

// file is an open file: it reads and seeks (http.FileServerFS needs
// both).
type file struct {
	info
	*bytes.Reader
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Close() error               { return nil }

// dir is an open directory.
type dir struct {
	info
	entries []fs.DirEntry
	read    int
}

func (d *dir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *dir) Close() error               { return nil }
func (d *dir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: fs.ErrInvalid}
}

// ReadDir is fs.ReadDirFile's: n > 0 at most n entries, io.EOF at the
// end; n <= 0 the rest.
func (d *dir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.read:]
	if n > 0 && len(rest) == 0 {
		return nil, io.EOF
	}
	if n > 0 && n < len(rest) {
		rest = rest[:n]
	}
	d.read += len(rest)
	return rest, nil
}
