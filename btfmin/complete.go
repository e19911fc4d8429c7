package btfmin

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/skelgen/skelgen/internal/cc"
)

// Diagnostics of clang-19 that name something the header lacks. Each
// pattern's first group is what is missing.
var (
	reUnknownType  = regexp.MustCompile(`error: unknown type name '(\w+)'`)
	reUndeclared   = regexp.MustCompile(`error: use of undeclared identifier '(\w+)'`)
	reNoMember     = regexp.MustCompile(`error: no member named '(\w+)' in '([^']+)'`)
	reIncompleteDf = regexp.MustCompile(`error: incomplete definition of type '([^']+)'`)
	reIncomplete   = regexp.MustCompile(`error: .*incomplete (?:element |result |return )?type '([^']+)'`)
	reNotVisible   = regexp.MustCompile(`warning: declaration of '((?:struct|union) \w+)' will not be visible outside`)
	reRedefinition = regexp.MustCompile(`error: redefinition of '(\w+)'`)
	reRedefEnumVal = regexp.MustCompile(`error: redefinition of enumerator '(\w+)'`)
	// reRegisters is a diagnostic about a register declaration (regs.go).
	reRegisters = regexp.MustCompile(`error: .*'(?:const )?(?:struct (?:pt_regs|user_pt_regs|user_regs_struct)|user_pt_regs)'`)
	// reDiag is a diagnostic's first line; its group is the place it
	// names (file:line:column). The lines clang prints after it (source
	// line, caret, notes) are not matched against the patterns above.
	reDiag = regexp.MustCompile(`^([^ ]+:\d+:\d+): (?:fatal error|error|warning): `)
)

// maxCompileRounds bounds the compile-and-complete loop; each round adds
// at least one declaration, and real programs settle in a handful.
const maxCompileRounds = 64

// compileSource compiles src against header, which is written as
// dir/name; src is copied into dir first so that its
// #include "name" finds the new header rather than a vmlinux.h beside the
// original source. The source's own directory stays on the include path
// for its other headers. It returns clang's diagnostics and whether it
// compiled; err is for failures to run clang at all. With out empty it
// only preprocesses and returns the preprocessed text instead. skelgen.h
// is on the include path, as in every compile skelgen runs.
func compileSource(clang, src string, cflags []string, dir, name string, header []byte, out string) (diags string, ok bool, err error) {
	if err := os.WriteFile(filepath.Join(dir, name), header, 0o644); err != nil {
		return "", false, err
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return "", false, err
	}
	srcCopy := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(srcCopy, data, 0o644); err != nil {
		return "", false, err
	}
	args := []string{"-g", "-O2", "-target", "bpf", "-fno-color-diagnostics", "-ferror-limit=0",
		"-I", dir, "-I", filepath.Dir(src)}
	args = append(args, cflags...)
	inc, err := cc.IncludeArgs(dir)
	if err != nil {
		return "", false, err
	}
	args = append(args, inc...)
	if out == "" {
		args = append(args, "-E", srcCopy)
	} else {
		args = append(args, "-c", srcCopy, "-o", out)
	}
	cmd := exec.Command(clang, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err = cmd.Run()
	diags = strings.ReplaceAll(stderr.String(), dir+string(filepath.Separator), "")
	if out == "" {
		diags = stdout.String()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return diags, true, nil
	case errors.As(err, &ee):
		return diags, false, nil
	default:
		return diags, false, fmt.Errorf("running %s: %w", clang, err)
	}
}

// clangSays introduces clang's diagnostics, as clang wrote them (source
// lines and carets included), in an error; the caller's own sentence
// follows on the last line.
func clangSays(clang, diags string) string {
	return filepath.Base(clang) + " reports:\n" + strings.TrimRight(diags, "\n") + "\n"
}

// Missing is a name the source uses that no kernel BTF declares.
type Missing struct {
	// Pos is where clang reported the use (file:line:column).
	Pos string
	// Name is the type, "type.member" or constant.
	Name string
}

// MissingError reports the names the source uses that no kernel BTF
// declares, each at the place of its use, after clang's diagnostics.
type MissingError struct {
	Clang   string // the compiler, for the introduction of Diags
	Diags   string // clang's diagnostics of the last compile
	Missing []Missing
}

func (e *MissingError) Error() string {
	var b strings.Builder
	if e.Diags != "" {
		b.WriteString(clangSays(e.Clang, e.Diags))
	}
	for i, m := range e.Missing {
		if i > 0 {
			b.WriteString("\n")
		}
		if typ, member, ok := strings.Cut(m.Name, "."); ok {
			fmt.Fprintf(&b, "%s: %s has no member %s, in the source or in the kernel BTF: fix its spelling, or check which kernels have it", m.Pos, strconv.Quote(typ), strconv.Quote(member))
		} else {
			fmt.Fprintf(&b, "%s: %s is declared neither by the source and its headers nor in the kernel BTF: declare it, or fix its spelling", m.Pos, strconv.Quote(m.Name))
		}
	}
	return b.String()
}

// complete compiles cfg.Source against the header and adds what clang
// reports missing from the kernel BTFs until it compiles.
func complete(c *chooser, cfg *Config) error {
	if len(c.kernels) == 0 {
		return errors.New("completing from the source needs a kernel BTF (-btf)")
	}
	dir, err := os.MkdirTemp("", "skelgen-btfmin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "out.o")
	guard := guardFor(cfg.output())
	clang, err := cfg.clang()
	if err != nil {
		return err
	}
	if err := c.wholeForLayoutUse(cfg, clang, dir); err != nil {
		return err
	}
	for round := 0; round < maxCompileRounds; round++ {
		header, err := c.write(cfg.Mode, guard, nil)
		if err != nil {
			return err
		}
		diags, ok, err := compileSource(clang, cfg.Source, cfg.CFlags, dir, cfg.output(), []byte(header), out)
		if err != nil {
			return err
		}
		missing := c.fix(diags)
		next, err := c.write(cfg.Mode, guard, nil)
		if err != nil {
			return err
		}
		changed := next != header
		if ok && !changed {
			return nil
		}
		if !changed {
			if len(missing) > 0 {
				return &MissingError{Clang: clang, Diags: diags, Missing: missing}
			}
			return fmt.Errorf("%s%s does not compile with the minimal header, and clang names nothing btfmin can add",
				clangSays(clang, diags), filepath.Base(cfg.Source))
		}
	}
	return fmt.Errorf("%s: header still incomplete after %d compiles", filepath.Base(cfg.Source), maxCompileRounds)
}

// reLayoutUse finds sizeof and offsetof applied to a named struct or
// union, and variables, members and parameters declared with one by
// value, in preprocessed source.
var (
	reLayoutUse = regexp.MustCompile(`\b(?:sizeof|offsetof|__builtin_offsetof)\s*\(\s*(struct|union)\s+(\w+)`)
	reByValue   = regexp.MustCompile(`\b(struct|union)\s+(\w+)\s+\w+\s*[;=\[,)]`)
	reLineMark  = regexp.MustCompile(`^# \d+ "([^"]*)"`)
)

// sourceLines keeps the lines of preprocessed text that come from the
// file named base (macro expansions included), dropping the headers'.
func sourceLines(text, base string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(text, "\n") {
		if m := reLineMark.FindStringSubmatch(line); m != nil {
			in = filepath.Base(m[1]) == base
			continue
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// wholeForLayoutUse keeps whole every type whose size or member offsets
// the source fixes at compile time: CO-RE does not relocate sizeof,
// offsetof or the layout of a local copy, and a compact definition would
// silently change them. Clang only complains when the type is
// incomplete, so the source's own lines are preprocessed and searched
// instead.
func (c *chooser) wholeForLayoutUse(cfg *Config, clang, dir string) error {
	header, err := c.write(cfg.Mode, guardFor(cfg.output()), nil)
	if err != nil {
		return err
	}
	text, ok, err := compileSource(clang, cfg.Source, cfg.CFlags, dir, cfg.output(), []byte(header), "")
	if err != nil || !ok {
		// The compile loop reports what is wrong with the source.
		return err
	}
	text = sourceLines(text, filepath.Base(cfg.Source))
	uses := append(reLayoutUse.FindAllStringSubmatch(text, -1), reByValue.FindAllStringSubmatch(text, -1)...)
	for _, m := range uses {
		if t, err := c.kernelType(m[1] + " " + m[2]); err == nil && c.isHeader(t) {
			c.use(t, true)
		}
	}
	return nil
}

// fix applies what clang's diagnostics ask for and returns the names it
// could not find.
func (c *chooser) fix(diags string) []Missing {
	var missing []Missing
	var pos string
	miss := func(s string) {
		if !slices.ContainsFunc(missing, func(m Missing) bool { return m.Name == s }) {
			missing = append(missing, Missing{Pos: pos, Name: s})
		}
	}
	for _, line := range strings.Split(diags, "\n") {
		d := reDiag.FindStringSubmatch(line)
		if d == nil {
			continue
		}
		pos = d[1]
		if len(c.arches) > 0 && reRegisters.MatchString(line) {
			// Declared in the register sections, whichever the
			// architecture compiled for.
			c.wantRegisters()
			continue
		}
		if m := reRedefEnumVal.FindStringSubmatch(line); m != nil {
			if e := c.enumHolding(m[1], true); e != nil {
				c.exclude[declKey(e)] = true
			}
			continue
		}
		if m := reRedefinition.FindStringSubmatch(line); m != nil {
			for _, kind := range []string{"struct", "union", "enum", "typedef"} {
				c.exclude[kind+" "+m[1]] = true
			}
			continue
		}
		// A bare name clang does not know is a typedef or an enumerator;
		// looking it up as a struct would pick up cascading errors such
		// as a parameter named pid whose type was unknown.
		if m := reUnknownType.FindStringSubmatch(line); m != nil {
			if t, err := c.kernelType("typedef " + m[1]); err == nil {
				c.use(t, true)
			} else {
				miss(m[1])
			}
			continue
		}
		if m := reUndeclared.FindStringSubmatch(line); m != nil {
			if e := c.enumHolding(m[1], false); e != nil {
				c.use(e, true)
				c.defs[declKey(e)] = e
			} else if t, err := c.kernelType("typedef " + m[1]); err == nil {
				c.use(t, true)
			} else {
				miss(m[1])
			}
			continue
		}
		if m := reNoMember.FindStringSubmatch(line); m != nil {
			t, err := c.kernelType(cType(m[2]))
			if err != nil {
				miss(m[2])
				continue
			}
			if err := c.keepPath(t, []pathElem{{name: m[1]}}); err != nil {
				if kt := c.kernelDefinition(t); kt != nil {
					err = c.mergeMember(t, kt, m[1])
				}
				if err != nil {
					miss(cType(m[2]) + "." + m[1])
				}
			}
			continue
		}
		if m := reIncompleteDf.FindStringSubmatch(line); m != nil {
			if t, err := c.kernelType(cType(m[1])); err == nil {
				c.define(c.resolveNamed(t))
			} else {
				miss(m[1])
			}
			continue
		}
		if m := reIncomplete.FindStringSubmatch(line); m != nil {
			if t, err := c.kernelType(cType(m[1])); err == nil {
				c.use(t, true)
			} else {
				miss(m[1])
			}
			continue
		}
		if m := reNotVisible.FindStringSubmatch(line); m != nil {
			if t, err := c.kernelType(m[1]); err == nil {
				c.use(t, false)
			} else {
				miss(m[1])
			}
		}
	}
	return missing
}

// cType strips qualifiers from a type as clang prints it.
func cType(s string) string {
	for _, q := range []string{"const ", "volatile "} {
		s = strings.TrimPrefix(s, q)
	}
	return strings.TrimSpace(s)
}

// enumHolding finds the enum declaring constant name: among the chosen
// definitions when chosen is set, else in the kernel BTFs.
func (c *chooser) enumHolding(name string, chosen bool) *btf.Enum {
	if chosen {
		keys := make([]string, 0, len(c.defs))
		for k := range c.defs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if e, ok := c.defs[k].(*btf.Enum); ok && slices.ContainsFunc(e.Values, func(v btf.EnumValue) bool { return v.Name == name }) {
				return e
			}
		}
		return nil
	}
	if c.enumerators == nil {
		// One pass over the kernel types indexes every enumerator;
		// completion asks for several per round.
		c.enumerators = map[string]*btf.Enum{}
		for _, s := range c.kernels {
			for t, err := range s.All() {
				if err != nil {
					break
				}
				if e, ok := t.(*btf.Enum); ok {
					for _, v := range e.Values {
						if _, dup := c.enumerators[v.Name]; !dup {
							c.enumerators[v.Name] = e
						}
					}
				}
			}
		}
	}
	return c.enumerators[name]
}

// kernelDefinition finds the kernel's own definition of a named type whose
// canonical definition came from an object.
func (c *chooser) kernelDefinition(t btf.Type) btf.Type {
	k := declKey(t)
	for _, s := range c.kernels {
		ts, _ := s.AnyTypesByName(t.TypeName())
		for _, kt := range ts {
			if declKey(kt) == k && kt != t {
				return kt
			}
		}
	}
	return nil
}

// mergeMember is the last resort for a member the object's copy of a type
// lacks (it was compiled against another kernel): the canonical type is
// replaced by the kernel's, keeping the members already chosen by name.
func (c *chooser) mergeMember(old, kt btf.Type, member string) error {
	if err := c.check(kt); err != nil {
		return err
	}
	if findMember(skipTypedefs(kt), member) == nil {
		return errNoMember
	}
	oldDef := c.resolveNamed(old)
	var kept []string
	if ks := c.keep[oldDef]; ks != nil {
		for i, m := range members(oldDef) {
			if (ks.whole || ks.members[i]) && m.Name != "" {
				kept = append(kept, m.Name)
			}
		}
	}
	c.canon[declKey(old)] = kt
	if td, ok := kt.(*btf.Typedef); ok {
		c.defs[declKey(td)] = td
	}
	for _, name := range append(kept, member) {
		if err := c.keepPath(kt, []pathElem{{name: name}}); err != nil && name == member {
			return err
		}
	}
	return nil
}
