package gen

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	clang "github.com/skelgen/skelgen/internal/cc"
)

// A Cache makes a go generate that changes nothing cost little more than
// starting skelgen: it remembers, for each run (keyed by the skelgen
// executable's contents, the working directory, the arguments, the
// environment a run reads and the C compiler's identity), the content
// hash of every file the run read (the input, every header the compiler
// read, the kernel BTF of -header, go.mod) and wrote. A later run with
// the same key whose files all still hash the same would write the same
// bytes: it replays the warnings and stops, compiling nothing.
//
// What it cannot see is a file appearing where none was read: a new
// header earlier on the include path than the one the compiler found.
// SKELGEN_CACHE=off turns the cache off; SKELGEN_CACHE=DIR puts it in
// DIR instead of skelgen/ under the user's cache directory.
type Cache struct {
	dir string
}

// OpenCache returns the generation cache, or nil where there is none
// (SKELGEN_CACHE=off, no user cache directory).
func OpenCache() *Cache {
	dir := os.Getenv("SKELGEN_CACHE")
	switch dir {
	case "off":
		return nil
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return nil
		}
		dir = filepath.Join(base, "skelgen")
	}
	return &Cache{dir: filepath.Join(dir, "generate")}
}

// cacheEntry is what a run read and wrote; a fileSum with an empty Sum is
// a file that must not exist.
type cacheEntry struct {
	Reads    []fileSum `json:"reads"`
	Outputs  []fileSum `json:"outputs"`
	Warnings []string  `json:"warnings,omitempty"`
}

type fileSum struct {
	Path string `json:"path"`
	Sum  string `json:"sum,omitempty"`
}

// A CacheRun is one generator run's view of the cache.
type CacheRun struct {
	c     *Cache
	key   string
	reads map[string]bool
	order []string
	warns []string
	// outputs are the files noted written (note), unless failed: one
	// could not be noted.
	outputs []fileSum
	failed  bool
}

// Run returns the cache's view of the run of cfg given by args in the
// working directory, as go generate runs it, or nil when such a run is
// not cached: a prebuilt object or -committed (nothing to save), a
// package name read from the directory's Go files, no compiler, no
// executable to hash. The -kernels and -btf-for directories count as
// read: their lists of names, and each file.
func (c *Cache) Run(cfg Config, args []string) *CacheRun {
	wd, err := os.Getwd()
	if err != nil {
		return nil
	}
	return c.runIn(cfg, args, wd, os.Getenv("GOPACKAGE"))
}

// runIn is Run for the line args of a package in dir named gopackage:
// the key go generate's run of it has.
func (c *Cache) runIn(cfg Config, args []string, dir, gopackage string) *CacheRun {
	if c == nil || !IsCSource(cfg.Input) || cfg.Committed || (cfg.Package == "" && gopackage == "") {
		return nil
	}
	key, err := runKey(cfg, args, dir, gopackage)
	if err != nil {
		return nil
	}
	return &CacheRun{c: c, key: key, reads: map[string]bool{}}
}

// runKey hashes what names a run besides the files it reads.
func runKey(cfg Config, args []string, wd, gopackage string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "skelgen generate cache 1\x00")
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	sum, err := hashFile(exe, false)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00", sum, wd, len(args))
	for _, a := range args {
		fmt.Fprintf(h, "%s\x00", a)
	}
	fmt.Fprintf(h, "GOPACKAGE=%s\x00", gopackage)
	for _, v := range []string{"CPATH", "C_INCLUDE_PATH", "PATH"} {
		fmt.Fprintf(h, "%s=%s\x00", v, os.Getenv(v))
	}
	cc, err := clang.Find(cfg.CC)
	if err != nil {
		return "", err
	}
	if cc, err = exec.LookPath(cc); err != nil {
		return "", err
	}
	fi, err := os.Stat(cc)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00", cc, fi.Size(), fi.ModTime().UnixNano())
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Read notes a file the run reads: set it as Config.Reads.
func (r *CacheRun) Read(path string) {
	abs, err := filepath.Abs(path)
	if err != nil || r.reads[abs] {
		return
	}
	r.reads[abs] = true
	r.order = append(r.order, abs)
}

// Warn notes a warning of the run, to be replayed by the runs it spares.
func (r *CacheRun) Warn(msg string) { r.warns = append(r.warns, msg) }

func (r *CacheRun) path() string { return filepath.Join(r.c.dir, r.key+".json") }

// Current reports whether the files the last run of this key read and
// wrote are as it left them, and returns its warnings and the number of
// files it wrote.
func (r *CacheRun) Current() (warnings []string, files int, ok bool) {
	data, err := readOutput(r.path())
	if err != nil {
		return nil, 0, false
	}
	var e cacheEntry
	if json.Unmarshal(data, &e) != nil || len(e.Reads) == 0 {
		return nil, 0, false
	}
	for i, list := range [][]fileSum{e.Reads, e.Outputs} {
		for _, f := range list {
			sum, err := hashFile(f.Path, i == 1)
			if errors.Is(err, fs.ErrNotExist) {
				sum, err = "", nil
			}
			if err != nil || sum != f.Sum {
				return nil, 0, false
			}
		}
	}
	return e.Warnings, len(e.Outputs), true
}

// note notes files the run wrote, for Save.
func (r *CacheRun) note(files []File) {
	for _, f := range files {
		abs, err := filepath.Abs(f.Path)
		if err != nil {
			r.failed = true
			return
		}
		fsum := fileSum{Path: abs}
		if !f.Remove {
			s := sha256.Sum256(f.Data)
			fsum.Sum = hex.EncodeToString(s[:])
		}
		r.outputs = append(r.outputs, fsum)
	}
}

// Save records the run that wrote files (and those noted before). A run
// whose entry cannot be written is simply not cached.
func (r *CacheRun) Save(files []File) {
	r.note(files)
	if r.failed {
		return
	}
	e := cacheEntry{Warnings: r.warns, Outputs: r.outputs}
	for _, p := range r.order {
		sum, err := hashFile(p, false)
		if errors.Is(err, fs.ErrNotExist) {
			sum, err = "", nil
		}
		if err != nil {
			return
		}
		e.Reads = append(e.Reads, fileSum{Path: p, Sum: sum})
	}
	data, err := json.Marshal(e)
	if err != nil || os.MkdirAll(r.c.dir, 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(r.c.dir, "entry-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil || checkOutput(r.path()) != nil || os.Rename(tmp.Name(), r.path()) != nil {
		os.Remove(tmp.Name())
	}
}

// hashFile returns the hex SHA-256 of a regular file's contents. An
// output is never reached through a symbolic link (skelgen writes none
// through one): one where the output was is a change, as an error.
func hashFile(path string, output bool) (string, error) {
	stat := os.Stat
	if output {
		stat = os.Lstat
	}
	fi, err := stat(path)
	if err != nil {
		return "", err
	}
	if fi.IsDir() && !output {
		// A directory read (-kernels, -btf-for) is its list of names: a
		// file added or removed changes the run.
		names, err := os.ReadDir(path)
		if err != nil {
			return "", err
		}
		h := sha256.New()
		for _, e := range names {
			fmt.Fprintf(h, "%s\x00", e.Name())
		}
		return "dir:" + hex.EncodeToString(h.Sum(nil)), nil
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
