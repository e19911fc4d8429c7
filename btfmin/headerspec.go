package btfmin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// anonEnumPrefix names the anonymous enums of a header while it is
// compiled into BTF; HeaderSpec makes them anonymous again.
const anonEnumPrefix = "__skelgen_anon_enum_"

// HeaderSpec compiles a header (one this package wrote) into BTF that
// holds every struct, union, enum and typedef it declares, so that the
// header can stand in for the kernel BTF it was made from: a header
// regenerated against it equals the header whenever the source asks for
// nothing the header lacks, and whatever it lacks is reported as not found
// (MissingError). A header with register sections (Config.Arches) is
// compiled for the architecture whose section came from the kernel BTF,
// whatever -D__TARGET_ARCH_ cflags says, so that the spec holds the
// kernel's registers. clang only puts used types into BTF, so every
// declaration gets a global pointer of its own; anonymous enums are named
// for the compile and made anonymous again.
func HeaderSpec(clang string, header []byte, cflags []string) (*btf.Spec, error) {
	dir, err := os.MkdirTemp("", "skelgen-hdrbtf-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	hpath := filepath.Join(dir, "header.h")
	if err := os.WriteFile(hpath, header, 0o644); err != nil {
		return nil, err
	}
	base := append([]string{"-target", "bpf", "-fno-color-diagnostics"}, kernelSectionFlags(header, cflags)...)
	ast := exec.Command(clang, append(base, "-x", "c", "-fsyntax-only", "-Xclang", "-ast-dump=json", hpath)...)
	var stderr bytes.Buffer
	ast.Stderr = &stderr
	out, err := ast.Output()
	if err != nil {
		return nil, fmt.Errorf("the header does not compile on its own: %w\n%s", err, stderr.String())
	}
	var root struct {
		Inner []struct {
			Kind     string `json:"kind"`
			Name     string `json:"name"`
			TagUsed  string `json:"tagUsed"`
			Implicit bool   `json:"isImplicit"`
			Range    struct {
				Begin struct {
					Offset   *int `json:"offset"`
					Included *struct {
						File string `json:"file"`
					} `json:"includedFrom"`
				} `json:"begin"`
			} `json:"range"`
		} `json:"inner"`
	}
	if err := json.Unmarshal(out, &root); err != nil {
		return nil, fmt.Errorf("reading clang's AST of the header: %w", err)
	}
	text := string(header)
	var refs []string
	var anonAt []int
	for _, d := range root.Inner {
		if d.Implicit || d.Range.Begin.Offset == nil || d.Range.Begin.Included != nil {
			continue
		}
		switch d.Kind {
		case "RecordDecl":
			if d.Name != "" {
				refs = append(refs, d.TagUsed+" "+d.Name)
			}
		case "EnumDecl":
			if d.Name != "" {
				refs = append(refs, "enum "+d.Name)
			} else {
				anonAt = append(anonAt, *d.Range.Begin.Offset)
			}
		case "TypedefDecl":
			refs = append(refs, d.Name)
		}
	}
	// Name the anonymous enums, from the last so that the offsets hold.
	for i := len(anonAt) - 1; i >= 0; i-- {
		at := anonAt[i]
		if !strings.HasPrefix(text[at:], "enum") {
			return nil, fmt.Errorf("the header's anonymous enum at byte %d does not start with enum", at)
		}
		name := fmt.Sprintf("%s%d", anonEnumPrefix, i)
		text = text[:at+len("enum")] + " " + name + text[at+len("enum"):]
		refs = append(refs, "enum "+name)
	}
	var src strings.Builder
	src.WriteString(text)
	src.WriteString("\n")
	for i, r := range refs {
		fmt.Fprintf(&src, "%s *__skelgen_ref_%d;\n", r, i)
	}
	cpath, opath := filepath.Join(dir, "header.c"), filepath.Join(dir, "header.o")
	if err := os.WriteFile(cpath, []byte(src.String()), 0o644); err != nil {
		return nil, err
	}
	cc := exec.Command(clang, append(base, "-g", "-c", cpath, "-o", opath)...)
	if b, err := cc.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("compiling the header into BTF: %w\n%s", err, b)
	}
	spec, err := btf.LoadSpec(opath)
	if err != nil {
		return nil, fmt.Errorf("the header's BTF: %w", err)
	}
	for t, err := range spec.All() {
		if err != nil {
			return nil, err
		}
		switch t := t.(type) {
		case *btf.Enum:
			if strings.HasPrefix(t.Name, anonEnumPrefix) {
				t.Name = ""
			}
		case *btf.Int:
			// clang names "short unsigned int" unsigned short in BTF;
			// the header keeps the kernel's spelling (GCC's, usually).
			if k, ok := gccIntNames[t.Name]; ok && strings.Contains(text, k) {
				t.Name = k
			}
		}
	}
	return spec, nil
}

// gccIntNames are GCC's names of the integer types clang names otherwise.
var gccIntNames = map[string]string{
	"short":              "short int",
	"unsigned short":     "short unsigned int",
	"long":               "long int",
	"unsigned long":      "long unsigned int",
	"long long":          "long long int",
	"unsigned long long": "long long unsigned int",
}

// kernelSectionFlags returns cflags for compiling header into the BTF it
// stands in for: when one register section came from the kernel BTF, its
// architecture replaces any -D__TARGET_ARCH_ of cflags.
func kernelSectionFlags(header []byte, cflags []string) []string {
	m := reKernelSection.FindSubmatch(header)
	if m == nil {
		return cflags
	}
	var out []string
	for _, f := range cflags {
		if !strings.HasPrefix(f, "-D__TARGET_ARCH_") {
			out = append(out, f)
		}
	}
	return append(out, "-D__TARGET_ARCH_"+string(m[1]))
}
