package gen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/tools/go/packages"
)

// GenerateAllOptions configure GenerateAll.
type GenerateAllOptions struct {
	// Patterns are package patterns, as for go generate; empty means ".".
	Patterns []string
	// Dir is the directory patterns are resolved in; empty means the
	// current directory.
	Dir string
	// Out receives a line per go:generate line: what it wrote.
	Out io.Writer
	// Warn receives each line's warnings.
	Warn func(msg string)
	// Cache, when not nil, spares the lines whose inputs are as their last
	// run (this one's or go generate's) read them.
	Cache *Cache
}

// GenerateAll runs the skelgen go:generate lines of the packages in one
// process, as go generate would run them one after the other, with what
// go generate gives each (its directory, $GOPACKAGE) and the cache: the
// lines read as Check reads them, their generates run ahead, several at
// once, and written in the lines' order. A line that read a file an
// earlier line then changed (the module's go.mod) is generated again
// after that write, so the outcome is go generate's. Each module's runtime
// copy is made once, after the lines, for what all of them wrote
// (copyPlan): the copy go generate's last line would leave. A line
// vendoring it is saved in the cache with the copy; when a line fails,
// the copies of the lines written before it are still made.
func GenerateAll(ctx context.Context, opts GenerateAllOptions) error {
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	warn := opts.Warn
	if warn == nil {
		warn = func(string) {}
	}
	patterns := opts.Patterns
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	pkgs, err := packages.Load(&packages.Config{Context: ctx, Dir: opts.Dir, Mode: packages.NeedName | packages.NeedFiles | packages.NeedModule}, patterns...)
	if err != nil {
		return err
	}
	if err := loadErrors(pkgs); err != nil {
		return err
	}
	if err := unmatchedPatterns(patterns, opts.Dir, pkgs); err != nil {
		return err
	}
	plan := planLines(pkgs, CheckOptions{}, false)
	// Each line's run: spared by the cache, or generated with the files
	// it reads noted.
	type run struct {
		mu      sync.Mutex // Generate may note reads and warnings from its goroutines
		cache   *CacheRun
		current bool
		reads   []string
		warns   []string
	}
	runs := make([]*run, len(plan))
	for i := range plan {
		pl := &plan[i]
		if pl.err != nil {
			continue
		}
		r := &run{cache: opts.Cache.runIn(pl.cfg, pl.gl.args, pl.gl.dir, pl.gl.pkg)}
		if r.cache != nil {
			r.warns, _, r.current = r.cache.Current()
		}
		cfg := &pl.cfg
		cfg.Reads = func(p string) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.reads = append(r.reads, p)
			if r.cache != nil {
				r.cache.Read(p)
			}
		}
		cfg.Warn = func(msg string) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.warns = append(r.warns, msg)
			if r.cache != nil {
				r.cache.Warn(msg)
			}
		}
		runs[i] = r
	}
	// Lines the cache spares are not generated ahead.
	ahead := slices.Clone(plan)
	for i, r := range runs {
		if r != nil && r.current {
			ahead[i].skip = true
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	gens := aheadGenerates(ctx, ahead, runtime.GOMAXPROCS(0))
	changed := map[string]bool{} // files this run wrote
	copies := copyPlans{}
	copyRuns := map[string][]*run{} // by copy: the cached lines that vendor it
	line := func(i int, pl plannedLine) error {
		r := runs[i]
		where := fmt.Sprintf("%s:%d", rel(opts.Dir, pl.gl.file), pl.gl.line)
		files, rc, err := gens.take()
		if r.current {
			for _, w := range r.warns {
				warn(w)
			}
			fmt.Fprintf(out, "%s: unchanged (inputs as the last run read them)\n", where)
			return nil
		}
		if err != nil && len(changed) > 0 || slices.ContainsFunc(r.reads, func(p string) bool { abs, _ := filepath.Abs(p); return changed[abs] }) {
			// It read what an earlier line wrote, or failed (perhaps
			// for a file an earlier line wrote): generate it again, as
			// go generate would have run it after those writes.
			r.reads, r.warns = nil, nil
			if r.cache != nil {
				r.cache = opts.Cache.runIn(pl.cfg, pl.gl.args, pl.gl.dir, pl.gl.pkg)
			}
			files, rc, err = generate(ctx, pl.cfg)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		for _, w := range r.warns {
			warn(w)
		}
		wrote := 0
		for _, f := range files {
			if !Unchanged(f) {
				abs, _ := filepath.Abs(f.Path)
				changed[abs] = true
				wrote++
			}
		}
		if err := WriteFiles(files); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		switch {
		case rc != nil:
			copies.add(*rc, files)
			if r.cache != nil {
				r.cache.note(files)
				copyRuns[rc.dir] = append(copyRuns[rc.dir], r)
			}
		case r.cache != nil:
			r.cache.Save(files)
		}
		fmt.Fprintf(out, "%s: %d files written, %d unchanged\n", where, wrote, len(files)-wrote)
		return nil
	}
	var failed error
	for i, pl := range plan {
		if failed = pl.err; failed == nil {
			failed = line(i, pl)
		}
		if failed != nil {
			break
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(copies)) {
		var reads []string
		files, err := copies[dir].files(func(p string) { reads = append(reads, p) })
		wrote := 0
		for _, f := range files {
			if !Unchanged(f) {
				wrote++
			}
		}
		if err == nil {
			err = WriteFiles(files)
		}
		if err != nil {
			return errors.Join(failed, fmt.Errorf("%s: %w", rel(opts.Dir, dir), err))
		}
		fmt.Fprintf(out, "%s: runtime copy: %d files written, %d unchanged\n", rel(opts.Dir, dir), wrote, len(files)-wrote)
		for _, r := range copyRuns[dir] {
			for _, p := range reads {
				r.cache.Read(p)
			}
			r.cache.Save(files)
		}
	}
	return failed
}
