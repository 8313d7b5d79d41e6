// goproxy: the Go fixture upstream of the gateway's tests (53-gateway-go).
// It makes modules as the go command does (golang.org/x/mod/zip's
// CreateFromDir), serves them as a GOPROXY below /mod/ and serves a
// checksum database it signs below /sumdb/NAME/ (x/mod/sumdb's server over
// its TestServer, a key made at start with note.GenerateKey). Every
// request is counted; GET /_hits prints "PATH COUNT" lines. One module,
// mods.example/evil, is served with a zip other than the one the checksum
// database vouches for.
//
// Built with Debian's golang-go and golang-golang-x-mod-dev, no network:
//   GO111MODULE=off GOPATH=/usr/share/gocode go build -o goproxy .
//
// Usage: goproxy DIR N   (writes "PORT\nVERIFIER-KEY\n" on stdout once listening)
package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb"
	"golang.org/x/mod/sumdb/dirhash"
	"golang.org/x/mod/sumdb/note"
	modzip "golang.org/x/mod/zip"
)

const dbName = "sumdb.fixture"

type mod struct {
	path, version  string
	info, gomod    []byte
	zip, servedZip []byte
}

var (
	mu   sync.Mutex
	hits = map[string]int{}
	mods = map[string]*mod{} // by "PATH@VERSION"
	list = map[string][]string{}
)

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "goproxy:", err)
		os.Exit(1)
	}
}

// makeModule writes a module's tree under dir and zips it as the go command does.
func makeModule(dir, path, version string, deps []string, extra string) *mod {
	src := filepath.Join(dir, "src", strings.ReplaceAll(path, "/", "_")+"@"+version)
	check(os.MkdirAll(src, 0o755))
	gomod := "module " + path + "\n\ngo 1.19\n"
	for _, d := range deps {
		gomod += "\nrequire " + d + "\n"
	}
	check(os.WriteFile(filepath.Join(src, "go.mod"), []byte(gomod), 0o644))
	pkg := filepath.Base(path)
	code := fmt.Sprintf("package %s\n\n// Version is this module's version.\nconst Version = %q\n%s", strings.ToLower(pkg), version, extra)
	check(os.WriteFile(filepath.Join(src, "lib.go"), []byte(code), 0o644))
	var buf bytes.Buffer
	check(modzip.CreateFromDir(&buf, module.Version{Path: path, Version: version}, src))
	m := &mod{path: path, version: version, gomod: []byte(gomod), zip: buf.Bytes()}
	m.servedZip = m.zip
	m.info = []byte(fmt.Sprintf("{\"Version\":%q,\"Time\":\"2020-01-01T00:00:00Z\"}\n", version))
	return m
}

func add(m *mod) {
	mods[m.path+"@"+m.version] = m
	list[m.path] = append(list[m.path], m.version)
}

// gosum answers the checksum database's question: the go.sum lines of a module version.
func gosum(path, vers string) ([]byte, error) {
	mu.Lock()
	m := mods[path+"@"+vers]
	mu.Unlock()
	if m == nil {
		return nil, fmt.Errorf("no such module %s@%s", path, vers)
	}
	f, err := os.CreateTemp("", "goproxy-*.zip")
	if err != nil {
		return nil, err
	}
	zf := f.Name()
	defer os.Remove(zf)
	_, err = f.Write(m.zip)
	f.Close()
	if err != nil {
		return nil, err
	}
	h, err := dirhash.HashZip(zf, dirhash.Hash1)
	if err != nil {
		return nil, err
	}
	hm, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return nopCloser{bytes.NewReader(m.gomod)}, nil
	})
	if err != nil {
		return nil, err
	}
	return []byte(fmt.Sprintf("%s %s %s\n%s %s/go.mod %s\n", path, vers, h, path, vers, hm)), nil
}

func proxy(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(r.URL.Path, "/mod/")
	i := strings.Index(p, "/@")
	if i < 0 {
		http.NotFound(w, r)
		return
	}
	path, err := module.UnescapePath(p[:i])
	if err != nil {
		http.NotFound(w, r)
		return
	}
	rest := p[i+1:]
	mu.Lock()
	defer mu.Unlock()
	if rest == "@v/list" {
		fmt.Fprint(w, strings.Join(list[path], "\n")+"\n")
		return
	}
	if rest == "@latest" {
		vs := list[path]
		if len(vs) == 0 {
			http.NotFound(w, r)
			return
		}
		w.Write(mods[path+"@"+vs[len(vs)-1]].info)
		return
	}
	ext := filepath.Ext(rest)
	vers, err := module.UnescapeVersion(strings.TrimSuffix(strings.TrimPrefix(rest, "@v/"), ext))
	m := mods[path+"@"+vers]
	if err != nil || m == nil {
		http.NotFound(w, r)
		return
	}
	switch ext {
	case ".info":
		w.Write(m.info)
	case ".mod":
		w.Write(m.gomod)
	case ".zip":
		w.Write(m.servedZip)
	default:
		http.NotFound(w, r)
	}
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: goproxy DIR N")
		os.Exit(2)
	}
	dir := os.Args[1]
	n, err := strconv.Atoi(os.Args[2])
	check(err)
	for i := 1; i <= n; i++ {
		p := fmt.Sprintf("mods.example/dep%02d", i)
		add(makeModule(dir, p, "v1.0.0", nil, ""))
		add(makeModule(dir, p, "v1.1.0", nil, ""))
	}
	add(makeModule(dir, "mods.example/Caps", "v0.1.0", nil, ""))
	evil := makeModule(dir, "mods.example/evil", "v1.0.0", nil, "")
	evil.servedZip = makeModule(dir+"/tampered", "mods.example/evil", "v1.0.0", nil, "\nfunc init() { println(\"pwned\") }\n").zip
	add(evil)
	for _, vs := range list {
		sort.Strings(vs)
	}

	skey, vkey, err := note.GenerateKey(rand.Reader, dbName)
	check(err)
	db := sumdb.NewServer(sumdb.NewTestServer(skey, gosum))
	mux := http.NewServeMux()
	for _, p := range sumdb.ServerPaths {
		mux.Handle("/sumdb/"+dbName+p, http.StripPrefix("/sumdb/"+dbName, db))
	}
	mux.HandleFunc("/sumdb/"+dbName+"/supported", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/mod/", proxy)
	mux.HandleFunc("/_hits", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		keys := make([]string, 0, len(hits))
		for k := range hits {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "%s %d\n", k, hits[k])
		}
	})
	count := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/_hits" {
			mu.Lock()
			hits[r.URL.Path]++
			mu.Unlock()
		}
		mux.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	check(err)
	fmt.Printf("%d\n%s\n", ln.Addr().(*net.TCPAddr).Port, vkey)
	check(http.Serve(ln, count))
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }
