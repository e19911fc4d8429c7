package btfmin

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// Every name the header writes comes from BTF: an object's, or a kernel
// BTF file given on the command line. Neither is trusted. A name holding
// a newline could put a preprocessor line (#include "/etc/hostname",
// #error) into the header, which clang then compiles; "*/" could end a
// comment, and a keyword or a stray character could change what a
// declaration means. So the writer passes every name through checkName
// and refuses the header when one is not a C identifier.

var (
	errNotIdent = errors.New("not a C identifier")
	errKeyword  = errors.New("a C keyword, not an identifier")
	errMacro    = errors.New("reserved by the C preprocessor or predefined by clang, not an identifier")
	errNoName   = errors.New("empty, where C needs a name")
	errNotBase  = errors.New("not a C basic type")
)

// reserved maps the words a declaration cannot use as a name to why:
// the keywords of C11, C23 and the GNU dialect clang compiles, and the
// macros the preprocessor defines before the header is read, which it
// would replace in a declaration (__LINE__ becomes a number) or reject
// there (_Pragma, __has_include). bool, true and false are left out
// although C23 makes them keywords: the kernel declares typedef _Bool
// bool and enum { false, true } itself, and clang compiles BPF programs
// as gnu17, where they are identifiers (vmlinux.h carries them too). A
// macro that a header the source includes defines is the source's
// business: the header cannot know it.
var reserved = map[string]error{}

func init() {
	for _, k := range strings.Fields(`
		auto break case char const continue default do double else enum
		extern float for goto if inline int long register restrict return
		short signed sizeof static struct switch typedef union unsigned void
		volatile while
		_Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary
		_Noreturn _Static_assert _Thread_local
		alignas alignof constexpr nullptr static_assert thread_local typeof
		typeof_unqual _BitInt _Decimal32 _Decimal64 _Decimal128
		asm __asm __asm__ __attribute __attribute__ __auto_type __alignof
		__alignof__ __builtin_offsetof __builtin_types_compatible_p
		__builtin_va_arg __complex __complex__ __const __const__ __extension__
		__imag __imag__ __inline __inline__ __int128 __label__ __real __real__
		__restrict __restrict__ __signed __signed__ __thread __typeof
		__typeof__ __typeof_unqual __typeof_unqual__ __volatile __volatile__
		__bf16 __fp16 _Float16 __float128 __ibm128 _Nonnull _Nullable
		_Nullable_result _Null_unspecified`) {
		reserved[k] = errKeyword
	}
	for _, m := range strings.Fields(preprocessorNames + clangBPFMacros) {
		reserved[m] = errMacro
	}
}

// preprocessorNames are the names C's preprocessor and clang's give a
// meaning of their own, which clang -dM does not list.
const preprocessorNames = `
		defined _Pragma __VA_ARGS__ __VA_OPT__ __LINE__ __FILE__ __DATE__
		__TIME__ __TIMESTAMP__ __COUNTER__ __INCLUDE_LEVEL__ __BASE_FILE__
		__FILE_NAME__ __MODULE__ __has_include __has_include_next __has_embed
		__has_feature __has_extension __has_builtin __has_constexpr_builtin
		__has_attribute __has_c_attribute __has_cpp_attribute
		__has_declspec_attribute __has_warning __is_identifier __building_module
		__is_target_arch __is_target_vendor __is_target_os
		__is_target_environment __is_target_variant_os
		__is_target_variant_environment
`

// baseTypeWords are the words a BTF integer or float type's name may
// combine ("long long unsigned int", "_Bool", "__int128 unsigned").
var baseTypeWords = map[string]bool{
	"char": true, "short": true, "int": true, "long": true, "signed": true, "unsigned": true,
	"_Bool": true, "float": true, "double": true, "__int128": true,
	"_Float16": true, "__bf16": true, "__fp16": true, "__float128": true,
}

// checkIdent reports whether name can be written as a C identifier:
// [A-Za-z_][A-Za-z0-9_]* and not a keyword or predefined macro
// (reserved).
func checkIdent(name string) error {
	if name == "" {
		return errNoName
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return errNotIdent
	}
	return reserved[name]
}

// checkBaseType reports whether name can be written as the name of an
// integer or float type: words of C's basic types separated by single
// spaces.
func checkBaseType(name string) error {
	if name == "" {
		return errNoName
	}
	for _, w := range strings.Split(name, " ") {
		if !baseTypeWords[w] {
			return errNotBase
		}
	}
	return nil
}

// btfSource is a BTF a type may come from, for messages: "kernel BTF
// /sys/kernel/btf/vmlinux" or an object's path.
type btfSource struct {
	desc string
	spec *btf.Spec
}

// sources lists the objects' and kernels' BTFs by where they were read
// from.
func sources(objPaths []string, objs []*Object, kernelPaths []string, kernels []*btf.Spec) []btfSource {
	var out []btfSource
	for i, o := range objs {
		out = append(out, btfSource{objPaths[i], o.Spec})
	}
	for i, k := range kernels {
		out = append(out, btfSource{"kernel BTF " + kernelPaths[i], k})
	}
	return out
}

// origin names the BTF that t was read from, or "" when none of the
// known ones holds it.
func (c *chooser) origin(t btf.Type) string {
	for _, s := range c.sources {
		if _, err := s.spec.TypeID(t); err == nil {
			return s.desc
		}
	}
	return ""
}

// describe names a type for messages: its kind and its name quoted
// (struct "task_struct", typedef "u32"), or <anon>. Names come from BTF
// and may hold anything, so they are never printed raw.
func describe(t btf.Type) string {
	kind, named := kindWord(t)
	if !named {
		return kind
	}
	if t.TypeName() == "" {
		return kind + " <anon>"
	}
	return kind + " " + strconv.Quote(t.TypeName())
}

// kindWord says what kind of type t is, in words, and whether a type of
// that kind has a name.
func kindWord(t btf.Type) (string, bool) {
	switch t := t.(type) {
	case *btf.Struct:
		return "struct", true
	case *btf.Union:
		return "union", true
	case *btf.Enum:
		return "enum", true
	case *btf.Fwd:
		if t.Kind == btf.FwdUnion {
			return "union", true
		}
		return "struct", true
	case *btf.Typedef:
		return "typedef", true
	case *btf.Int:
		return "int type", true
	case *btf.Float:
		return "float type", true
	case *btf.Void:
		return "void", false
	case *btf.Pointer:
		return "pointer", false
	case *btf.Array:
		return "array", false
	case *btf.FuncProto:
		return "function prototype", false
	}
	return strings.ToLower(strings.TrimPrefix(fmt.Sprintf("%T", t), "*btf.")), true
}

// commentLine makes a line of the header's leading comment from text
// the caller gave (file names, -field and -decl): quoted when it holds
// anything but printable ASCII, and never closing the comment.
func commentLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			s = strconv.QuoteToASCII(s)
			break
		}
	}
	return strings.ReplaceAll(s, "*/", "* /")
}

// quoteAll quotes each name and joins them with commas.
func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
