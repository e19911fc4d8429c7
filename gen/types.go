package gen

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cilium/ebpf/btf"
	"github.com/dave/jennifer/jen"

	"github.com/skelgen/skelgen/internal/gocomment"
)

// TypeGen turns BTF types into Go declarations whose memory layout is the C
// layout: unsafe.Sizeof of every generated struct equals the BTF size and
// every field sits at its BTF offset.
//
// The rules, chosen so that a value can be copied to and from the kernel as
// raw bytes on every 32- and 64-bit GOARCH:
//   - every hole and the trailing padding of a C struct is an explicit
//     `_ [N]byte` field, so Go never pads implicitly;
//   - a member whose Go alignment the C offset (or the C size) does not
//     allow, such as a u64 at offset 4 in a packed struct, is stored as
//     `<Name>Bytes [N]byte` with Name/SetName accessor methods;
//   - a union is a struct holding its first largest member, followed by
//     padding; the other members are read and written through accessors
//     that reinterpret the union's bytes;
//   - bitfields live in `BitsN [N]byte` storage fields covering exactly the
//     bytes the bitfields occupy, with one getter and setter per bitfield;
//     they decode bits in the object's byte order;
//   - anonymous structs, unions and enums become named types: the name
//     registered with Name, else the typedef naming them, else
//     `<Parent>_<Member>` or `<Parent>_AnonN` for members, else AnonN;
//     an anonymous member is embedded, so its fields read as in C;
//   - typedefs are transparent: a field of type pid_t is an int32 with a
//     comment naming pid_t; only structs, unions and enums get Go types;
//   - char is byte (char arrays hold text), signed char int8, unsigned char
//     uint8, _Bool bool, __int128 and long double [16]byte, pointers uint64;
//   - members of size zero (flexible array members) are left out, since Go
//     pads a struct ending in a zero-sized field.
//
// Storage fields are exported because cilium/ebpf copies values without
// reflection only when a struct has no unexported fields.
type TypeGen struct {
	// Prefix starts every generated type name (and so every enum
	// constant's); set it before the first GoType or Name call.
	Prefix string

	order binary.ByteOrder
	// Keyed by key, not by btf.Type: cilium/ebpf hands out separate
	// copies of one C type for maps and for variables.
	preferred map[string]string
	which     map[string]string // doc sentences of nameDefinition
	names     map[string]string
	taken     map[string]bool
	plans     map[string]*tyPlan
	keys      map[btf.Type]string
	ids       map[string]int // a number for each key, which keys of containing types use
	queue     []btf.Type
	anon      int
	// depth bounds repr's recursion: malformed BTF can make types loop.
	depth int
	// verb, when set, writes the size checks verbatim (see verbatim).
	verb *verbatim
	// codes are the Go types that need no declaration (uint32, [4]byte)
	// by their text, each made once: jennifer only reads the codes it
	// renders, so every field of one such type shares its code.
	codes map[string]jen.Code
	// byteArrays are the texts of [n]byte, by n.
	byteArrays map[uint32]string
	// Bridge is the import path of the bridge package, whose CString the
	// C string methods call.
	Bridge string
}

// NewTypeGen returns a generator for BTF of the given byte order, the byte
// order of the object the BTF comes from.
func NewTypeGen(order binary.ByteOrder) *TypeGen {
	return &TypeGen{
		order:     order,
		preferred: make(map[string]string),
		which:     make(map[string]string),
		names:     make(map[string]string),
		taken:     make(map[string]bool),
		plans:     make(map[string]*tyPlan),
		keys:      make(map[btf.Type]string),
		ids:       make(map[string]int),

		codes:      make(map[string]jen.Code),
		byteArrays: make(map[uint32]string),
	}
}

// builtin is the code of the predeclared type text, as mk makes it.
func (g *TypeGen) builtin(text string, mk func() *jen.Statement) jen.Code {
	c, ok := g.codes[text]
	if !ok {
		c = mk()
		g.codes[text] = c
	}
	return c
}

// byteArray is the code and the text of the type [n]byte.
func (g *TypeGen) byteArray(n uint32) (jen.Code, string) {
	text, ok := g.byteArrays[n]
	if !ok {
		text = tyBytesText(n)
		g.byteArrays[n] = text
		g.codes[text] = tyBytes(n)
	}
	return g.codes[text], text
}

// Name registers a preferred Go name for an anonymous type, used when the
// type is first reached. Names of named C types are not affected.
func (g *TypeGen) Name(t btf.Type, goName string) {
	g.prefer(t, g.Prefix+goName)
}

// prefer records a full Go name for an anonymous type; the first wins.
func (g *TypeGen) prefer(t btf.Type, goName string) {
	t = btf.QualifiedType(t)
	if t.TypeName() == "" {
		k := g.key(t)
		if _, ok := g.preferred[k]; !ok {
			g.preferred[k] = goName
		}
	}
}

// nameDefinition gives t, one of several C types of its name, the Go
// name Prefix+goName and a sentence saying which definition it is.
func (g *TypeGen) nameDefinition(t btf.Type, goName, which string) {
	k := g.key(btf.QualifiedType(t))
	if _, ok := g.preferred[k]; !ok {
		g.preferred[k] = g.Prefix + goName
		g.which[k] = which
	}
}

// tySizeText is "struct x (16 bytes)", or the C name alone when t has no
// size.
func tySizeText(t btf.Type) string {
	return tyCName(t) + sizeNote(t)
}

// GoType returns the Go type expression for t and queues the named Go types
// it needs for Decls.
func (g *TypeGen) GoType(t btf.Type) (jen.Code, error) {
	// A type that contains itself by value (only malformed BTF does) has no
	// size; cilium/ebpf's Sizeof detects that, before the walks below would
	// recurse forever.
	if _, err := btf.Sizeof(t); err != nil {
		if _, isPtr := btf.UnderlyingType(t).(*btf.Pointer); !isPtr {
			if _, isVoid := t.(*btf.Void); !isVoid {
				return nil, fmt.Errorf("type %s: %w", tyCName(t), err)
			}
		}
	}
	r, err := g.repr(t)
	if err != nil {
		return nil, err
	}
	g.verb.known(r.code, r.text)
	return r.code, nil
}

// Decls returns the declarations of every queued type and of the types they
// reach, sorted by Go name. Each struct and union is followed by a
// compile-time check that its Go size is its C size.
func (g *TypeGen) Decls() ([]jen.Code, error) {
	// Planning a type can queue more types, so drain until nothing is new.
	for i := 0; i < len(g.queue); i++ {
		if _, err := g.plan(g.queue[i]); err != nil {
			return nil, err
		}
	}
	plans := make([]*tyPlan, 0, len(g.queue))
	for _, t := range g.queue {
		plans = append(plans, g.plans[g.key(t)])
	}
	slices.SortFunc(plans, func(a, b *tyPlan) int { return cmp.Compare(a.goName, b.goName) })
	var out []jen.Code
	for _, p := range plans {
		out = append(out, g.render(p)...)
	}
	return out, nil
}

// tyRepr is the Go representation of a C type.
type tyRepr struct {
	code jen.Code
	// text is code as go/format writes it, for the types written
	// verbatim (names, builtins, arrays of those); empty otherwise.
	text  string
	size  uint32
	align uint32 // Go alignment on 64-bit targets, the strictest case
	cName string // C spelling, for comments
	// scalar describes integer-like types that a bitfield may have.
	scalar tyScalar
}

type tyScalar int

const (
	tyNotScalar tyScalar = iota
	tyUnsigned
	tySigned
	tyBool
)

func (g *TypeGen) repr(t btf.Type) (tyRepr, error) {
	g.depth++
	defer func() { g.depth-- }()
	if g.depth > 64 {
		return tyRepr{}, fmt.Errorf("type %s: nested more than 64 deep (a loop in the BTF?)", tyCName(t))
	}
	t = btf.QualifiedType(t)
	switch t := t.(type) {
	case *btf.Int:
		return g.intRepr(t)
	case *btf.Float:
		switch t.Size {
		case 4:
			return tyRepr{code: g.builtin("float32", jen.Float32), text: "float32", size: 4, align: 4, cName: t.Name}, nil
		case 8:
			return tyRepr{code: g.builtin("float64", jen.Float64), text: "float64", size: 8, align: 8, cName: t.Name}, nil
		}
		code, text := g.byteArray(t.Size)
		return tyRepr{code: code, text: text, size: t.Size, align: 1, cName: t.Name}, nil
	case *btf.Pointer:
		return tyRepr{code: g.builtin("uint64", jen.Uint64), text: "uint64", size: 8, align: 8, cName: tyCName(t)}, nil
	case *btf.Array:
		elem, err := g.repr(t.Type)
		if err != nil {
			return tyRepr{}, fmt.Errorf("array %s: %w", tyCName(t), err)
		}
		text := ""
		if elem.text != "" {
			text = "[" + strconv.Itoa(int(t.Nelems)) + "]" + elem.text
		}
		return tyRepr{
			code:  jen.Index(jen.Lit(int(t.Nelems))).Add(elem.code),
			text:  text,
			size:  elem.size * t.Nelems,
			align: elem.align,
			cName: tyCName(t),
		}, nil
	case *btf.Typedef:
		under := btf.QualifiedType(t.Type)
		switch under.(type) {
		case *btf.Struct, *btf.Union, *btf.Enum:
			if under.TypeName() == "" {
				g.Name(under, GoName(t.Name))
			}
		}
		r, err := g.repr(under)
		if err != nil {
			return tyRepr{}, fmt.Errorf("typedef %s: %w", t.Name, err)
		}
		r.cName = t.Name
		return r, nil
	case *btf.Struct, *btf.Union, *btf.Enum:
		p, err := g.plan(t)
		if err != nil {
			return tyRepr{}, err
		}
		return tyRepr{code: p.code, text: p.goName, size: p.size, align: p.align, cName: p.cName, scalar: p.scalar}, nil
	}
	return tyRepr{}, fmt.Errorf("%s: no Go representation (only reachable behind a pointer)", tyCName(t))
}

func (g *TypeGen) intRepr(t *btf.Int) (tyRepr, error) {
	r := tyRepr{size: t.Size, align: t.Size, cName: t.Name, scalar: tyUnsigned}
	signed := t.Encoding&btf.Signed != 0
	if signed {
		r.scalar = tySigned
	}
	var mk func() *jen.Statement
	switch {
	case t.Encoding&btf.Bool != 0 && t.Size == 1:
		mk, r.text, r.scalar = jen.Bool, "bool", tyBool
	case t.Name == "char" && t.Size == 1:
		mk, r.text = jen.Byte, "byte"
	case t.Size == 1 && signed:
		mk, r.text = jen.Int8, "int8"
	case t.Size == 1:
		mk, r.text = jen.Uint8, "uint8"
	case t.Size == 2 && signed:
		mk, r.text = jen.Int16, "int16"
	case t.Size == 2:
		mk, r.text = jen.Uint16, "uint16"
	case t.Size == 4 && signed:
		mk, r.text = jen.Int32, "int32"
	case t.Size == 4:
		mk, r.text = jen.Uint32, "uint32"
	case t.Size == 8 && signed:
		mk, r.text = jen.Int64, "int64"
	case t.Size == 8:
		mk, r.text = jen.Uint64, "uint64"
	case t.Size == 16:
		// Go has no 128-bit integer; keep the bytes.
		r.code, r.text = g.byteArray(16)
		r.align, r.scalar = 1, tyNotScalar
		return r, nil
	default:
		return tyRepr{}, fmt.Errorf("int %s: unsupported size %d", t.Name, t.Size)
	}
	r.code = g.builtin(r.text, mk)
	return r, nil
}

func tyBytes(n uint32) jen.Code { return jen.Index(jen.Lit(int(n))).Byte() }

// tyBytesText is tyBytes as text.
func tyBytesText(n uint32) string { return "[" + strconv.Itoa(int(n)) + "]byte" }

// tySize is a size or count in decimal.
func tySize(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

// tyCName spells a C type for comments and errors.
func tyCName(t btf.Type) string { return tyCNameDepth(t, 0) }

// tyCNameDepth names t in C; depth bounds the walk, since malformed BTF can
// make a pointer or qualifier chain loop.
func tyCNameDepth(t btf.Type, depth int) string {
	if depth > 16 {
		return "..."
	}
	next := func(t btf.Type) string { return tyCNameDepth(t, depth+1) }
	switch t := t.(type) {
	case *btf.Pointer:
		if _, ok := btf.QualifiedType(t.Target).(*btf.FuncProto); ok {
			return "function pointer"
		}
		return next(t.Target) + " *"
	case *btf.Const:
		return "const " + next(t.Type)
	case *btf.Volatile:
		return "volatile " + next(t.Type)
	case *btf.Restrict:
		return next(t.Type) + " restrict"
	case *btf.TypeTag:
		return next(t.Type)
	case *btf.Array:
		return fmt.Sprintf("%s[%d]", next(t.Type), t.Nelems)
	case *btf.Void:
		return "void"
	case *btf.FuncProto:
		return "function"
	case *btf.Struct:
		return "struct " + tyOr(t.Name, "(anon)")
	case *btf.Union:
		return "union " + tyOr(t.Name, "(anon)")
	case *btf.Enum:
		return "enum " + tyOr(t.Name, "(anon)")
	case *btf.Fwd:
		return t.Kind.String() + " " + t.Name
	}
	if t.TypeName() != "" {
		return t.TypeName()
	}
	return fmt.Sprintf("%T", t)
}

func tyOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// goNameOf assigns t a unique top-level Go name.
func (g *TypeGen) goNameOf(t btf.Type) string {
	k := g.key(t)
	if n, ok := g.names[k]; ok {
		return n
	}
	base := g.preferred[k]
	if base == "" && t.TypeName() != "" {
		base = g.Prefix + GoName(t.TypeName())
	}
	if base == "" {
		base = fmt.Sprintf("%sAnon%d", g.Prefix, g.anon)
		g.anon++
	}
	n := g.reserve(base)
	g.names[k] = n
	return n
}

// reserve claims a top-level identifier, adding a numeric suffix when the
// name is taken.
func (g *TypeGen) reserve(base string) string {
	return tyUnique(g.taken, base)
}

func tyUnique(taken map[string]bool, base string) string {
	n := base
	for i := 2; taken[n]; i++ {
		n = fmt.Sprintf("%s%d", base, i)
	}
	taken[n] = true
	return n
}

// GoName turns a C identifier into an exported Go identifier: snake_case
// and SCREAMING_CASE become CamelCase, other letters keep their case.
// The result is never a Go keyword, since it starts with an upper-case
// letter (or X, for names starting with a digit). Collisions between
// results are resolved by the caller, which knows the scope.
func GoName(cname string) string {
	if s, ok := goNameASCII(cname); ok {
		return s
	}
	return goNameRunes(cname)
}

// goNameASCII is GoName of an ASCII name, in one pass over its bytes (C
// names nearly always are); ok is false for other names.
func goNameASCII(cname string) (string, bool) {
	b := make([]byte, 0, len(cname)+1)
	alnum := func(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
	for i := 0; i < len(cname); {
		if c := cname[i]; c >= 0x80 {
			return "", false
		} else if !alnum(c) {
			i++
			continue
		}
		end := i
		upper := true
		for end < len(cname) && cname[end] < 0x80 && alnum(cname[end]) {
			if c := cname[end]; 'a' <= c && c <= 'z' {
				upper = false
			}
			end++
		}
		if end < len(cname) && cname[end] >= 0x80 {
			return "", false
		}
		word := cname[i:end]
		first := word[0]
		if 'a' <= first && first <= 'z' {
			first -= 'a' - 'A'
		}
		b = append(b, first)
		for j := 1; j < len(word); j++ {
			c := word[j]
			if upper && 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
		}
		i = end
	}
	switch {
	case len(b) == 0:
		return "X", true
	case '0' <= b[0] && b[0] <= '9':
		return "X" + string(b), true
	}
	return string(b), true
}

// goNameRunes is GoName of a name that is not ASCII (only malformed or
// hostile BTF has such C names). The result is ASCII too: a rune that is
// not ASCII is a word of its own, u and its code point in hex (U043e for a
// Cyrillic o), so that a name cannot pass for another that looks the same
// (Cоunts is CU043eUnts, not a second Counts); a byte that is not UTF-8
// is x and its value.
func goNameRunes(cname string) string {
	var b strings.Builder
	for i, r := range cname {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r == utf8.RuneError && !strings.HasPrefix(cname[i:], string(utf8.RuneError)):
			fmt.Fprintf(&b, "_x%02x_", cname[i])
		default:
			fmt.Fprintf(&b, "_u%04x_", r)
		}
	}
	s, _ := goNameASCII(b.String())
	return s
}

// tyPlan is the decided Go form of one struct, union or enum.
type tyPlan struct {
	c       btf.Type
	goName  string
	code    jen.Code // jen.Id(goName), shared by the fields of this type
	cName   string
	size    uint32
	align   uint32
	scalar  tyScalar
	enum    *btf.Enum
	under   jen.Code // an enum's underlying Go type
	underT  string   // the same as text
	consts  []tyConst
	fields  []tyField
	access  []tyAccessor
	omitted []string
	cstrs   []tyCString
}

// tyCString is a string accessor of a char array field: C code treats
// such arrays as NUL-terminated strings (task comm, file names).
type tyCString struct {
	method, field, member string
	n                     uint32
}

// tyIsCharArray reports whether t is a one-dimensional array of char.
func tyIsCharArray(t btf.Type) bool {
	a, ok := btf.QualifiedType(t).(*btf.Array)
	if !ok {
		return false
	}
	i, ok := btf.UnderlyingType(a.Type).(*btf.Int)
	return ok && i.Name == "char" && i.Size == 1
}

type tyConst struct {
	name  string
	value string
	cname string // the enumerator's C name
}

// tyField is one Go struct field. name "_" is padding; embed means an
// anonymous C member embedded by its type name.
type tyField struct {
	name    string
	embed   bool
	code    jen.Code
	text    string // as tyRepr.text
	comment string
	member  int // index of the C member held, -1 for padding and bitfields
}

// tyAccessor is a getter and setter pair for a member that is not a plain
// Go field. storage names the field holding its bytes, or is empty for a
// union member, which is read from the whole union.
type tyAccessor struct {
	get, set string
	member   btf.Member
	r        tyRepr
	storage  string
	base     uint32 // byte offset of the storage within the C type
}

// plan decides the Go form of a struct, union or enum once and queues it.
func (g *TypeGen) plan(t btf.Type) (*tyPlan, error) {
	k := g.key(t)
	if p, ok := g.plans[k]; ok {
		return p, nil
	}
	p := &tyPlan{c: t, goName: g.goNameOf(t), cName: tyCName(t)}
	p.code = jen.Id(p.goName)
	// Registered before planning the members, so that a member's Go name
	// can use the parent's.
	g.plans[k] = p
	var err error
	switch t := t.(type) {
	case *btf.Struct:
		p.size = t.Size
		err = g.planStruct(p, t.Members)
	case *btf.Union:
		p.size = t.Size
		err = g.planUnion(p, t.Members)
	case *btf.Enum:
		err = g.planEnum(p, t)
	default:
		err = fmt.Errorf("%s: not a struct, union or enum", tyCName(t))
	}
	if err != nil {
		delete(g.plans, k)
		return nil, err
	}
	g.queue = append(g.queue, t)
	return p, nil
}

func (g *TypeGen) planEnum(p *tyPlan, t *btf.Enum) error {
	p.enum, p.size, p.align = t, t.Size, t.Size
	p.scalar = tyUnsigned
	if t.Signed {
		p.scalar = tySigned
	}
	var mk, mkSigned func() *jen.Statement
	switch t.Size {
	case 1:
		mk, mkSigned = jen.Uint8, jen.Int8
	case 2:
		mk, mkSigned = jen.Uint16, jen.Int16
	case 4:
		mk, mkSigned = jen.Uint32, jen.Int32
	case 8:
		mk, mkSigned = jen.Uint64, jen.Int64
	default:
		return fmt.Errorf("%s: unsupported size %d", p.cName, t.Size)
	}
	p.underT = "uint" + strconv.Itoa(int(t.Size*8))
	if t.Signed {
		p.underT, mk = p.underT[1:], mkSigned
	}
	p.under = g.builtin(p.underT, mk)
	for _, v := range t.Values {
		// COLOR_RED of enum color is ColorRed, RED is ColorRed too.
		name := GoName(v.Name)
		if strings.HasPrefix(name, strings.TrimPrefix(p.goName, g.Prefix)) {
			name = g.Prefix + name
		} else {
			name = p.goName + name
		}
		value := fmt.Sprint(v.Value)
		if t.Signed {
			value = fmt.Sprint(tySignExtend(v.Value, t.Size*8))
		}
		p.consts = append(p.consts, tyConst{name: g.reserve(name), value: value, cname: v.Name})
	}
	return nil
}

// tySignExtend reads the low bits of v as a signed number: BTF keeps the
// values of 32-bit signed enums zero-extended.
func tySignExtend(v uint64, bits uint32) int64 {
	if bits >= 64 {
		return int64(v)
	}
	return int64(v<<(64-bits)) >> (64 - bits)
}

// tyCap is the largest Go alignment a type of this C size may have without
// Go rounding its size up.
func tyCap(size uint32) uint32 {
	a := uint32(8)
	for a > 1 && size%a != 0 {
		a /= 2
	}
	return a
}

// memberRepr returns a member's Go form, naming anonymous member types
// after the parent.
func (g *TypeGen) memberRepr(p *tyPlan, m btf.Member, goName string, anonIndex int) (tyRepr, error) {
	inner := btf.QualifiedType(m.Type)
	for depth := 0; ; depth++ {
		a, ok := inner.(*btf.Array)
		if !ok {
			break
		}
		if depth > 32 {
			// Only malformed BTF nests arrays this deep (or in a loop).
			return tyRepr{}, fmt.Errorf("member %s: arrays nested more than 32 deep", m.Name)
		}
		inner = btf.QualifiedType(a.Type)
	}
	switch inner.(type) {
	case *btf.Struct, *btf.Union, *btf.Enum:
		if m.Name != "" {
			g.prefer(inner, p.goName+"_"+goName)
		} else {
			g.prefer(inner, fmt.Sprintf("%s_Anon%d", p.goName, anonIndex))
		}
	}
	r, err := g.repr(m.Type)
	if err != nil {
		return tyRepr{}, fmt.Errorf("%s member %s: %w", p.cName, tyOr(m.Name, "(anon)"), err)
	}
	return r, nil
}

// tyMemberComment says what Go's spelling of a member hides: pointer
// targets and typedef names, except fixed-width integer typedefs such as
// __u32, whose Go type says as much.
func tyMemberComment(m btf.Member, r tyRepr) string {
	switch btf.QualifiedType(m.Type).(type) {
	case *btf.Pointer:
		return gocomment.Text(r.cName)
	case *btf.Typedef:
		if !tyFixedWidth(r.cName) && r.goString() != GoName(r.cName) {
			return gocomment.Text(r.cName)
		}
	}
	return ""
}

func tyFixedWidth(name string) bool {
	name = strings.TrimPrefix(name, "__")
	name = strings.TrimSuffix(name, "_t")
	name = strings.TrimPrefix(strings.TrimPrefix(name, "uint"), "int")
	name = strings.TrimPrefix(strings.TrimPrefix(name, "u"), "s")
	switch name {
	case "8", "16", "32", "64":
		return true
	}
	return false
}

type tyStructEntry struct {
	lo, hi  uint32
	members []btf.Member // the struct's, several for a bitfield storage unit
	bits    bool
	index   int // of the (first) member
}

// countBits counts the bitfield members at the start of members.
func countBits(members []btf.Member) int {
	n := 0
	for n < len(members) && members[n].BitfieldSize > 0 {
		n++
	}
	return n
}

// memberNames assigns the Go names of a struct's or union's named
// members (see naming.go), by member index ("" for an anonymous member),
// and claims them in fieldNames before any name the generator adds.
func memberNames(members []btf.Member, fieldNames map[string]bool) []string {
	var cnames []string
	var idx []int
	for i, m := range members {
		if m.Name != "" {
			cnames = append(cnames, m.Name)
			idx = append(idx, i)
		}
	}
	out := make([]string, len(members))
	for j, n := range assignNames(cnames, fieldNames) {
		out[idx[j]] = n
	}
	return out
}

// tyFieldComment is the comment of the field holding member m: the C
// name when the Go name neither is GoName of it nor spells it out, then
// what tyMemberComment says.
func tyFieldComment(m btf.Member, goName string, r tyRepr) string {
	c := tyMemberComment(m, r)
	if goName == GoName(m.Name) || goName == "C_"+m.Name {
		return c
	}
	name := "member " + gocomment.Text(m.Name)
	if c == "" {
		return name
	}
	return name + ", " + c
}

func (g *TypeGen) planStruct(p *tyPlan, members []btf.Member) error {
	fieldNames := make(map[string]bool, len(members))
	goNames := memberNames(members, fieldNames)
	capAlign := tyCap(p.size)
	entries := make([]tyStructEntry, 0, len(members))
	// a field per member, and padding between some
	p.fields = make([]tyField, 0, len(members)+len(members)/4+1)
	bitfields := 0
	for i, m := range members {
		if m.BitfieldSize > 0 {
			bitfields++
			lo := uint32(m.Offset) / 8
			hi := (uint32(m.Offset) + uint32(m.BitfieldSize) + 7) / 8
			if n := len(entries); n > 0 && entries[n-1].bits && lo < entries[n-1].hi {
				// The run of members sharing the unit grows by this one.
				e := &entries[n-1]
				e.hi = max(e.hi, hi)
				e.members = e.members[:len(e.members)+1]
				continue
			}
			entries = append(entries, tyStructEntry{lo: lo, hi: hi, members: members[i : i+1 : i+1+countBits(members[i+1:])], bits: true, index: i})
			continue
		}
		if m.Offset%8 != 0 {
			return fmt.Errorf("%s member %s: offset %d bits is not a whole byte", p.cName, m.Name, m.Offset)
		}
		entries = append(entries, tyStructEntry{lo: uint32(m.Offset) / 8, members: members[i : i+1 : i+1], index: i})
	}

	var cur uint32
	anon, bitsN := 0, 0
	// an accessor per bitfield, and per member Go cannot align
	pending := make([]tyAccessor, 0, bitfields)
	for _, e := range entries {
		if e.bits {
			if e.lo < cur {
				return fmt.Errorf("%s member %s: overlaps the previous member", p.cName, e.members[0].Name)
			}
			g.pad(p, cur, e.lo)
			name := uniqueName(fieldNames, "Bits"+strconv.Itoa(bitsN))
			bitsN++
			code, text := g.byteArray(e.hi - e.lo)
			p.fields = append(p.fields, tyField{name: name, code: code, text: text,
				comment: "bitfields " + tyBitNames(e.members), member: -1})
			for j, m := range e.members {
				r, err := g.memberRepr(p, m, goNames[e.index+j], anon)
				if err != nil {
					return err
				}
				pending = append(pending, tyAccessor{get: goNames[e.index+j], member: m, r: r, storage: name, base: e.lo})
			}
			cur = e.hi
			continue
		}
		m := e.members[0]
		r, err := g.memberRepr(p, m, goNames[e.index], anon)
		if m.Name == "" {
			anon++
		}
		if err != nil {
			return err
		}
		if r.size == 0 {
			p.omitted = append(p.omitted, tyOr(m.Name, "(anon)"))
			continue
		}
		if e.lo < cur {
			return fmt.Errorf("%s member %s: overlaps the previous member", p.cName, m.Name)
		}
		g.pad(p, cur, e.lo)
		cur = e.lo + r.size
		allowed := min(capAlign, tyCap(e.lo))
		if r.align <= allowed {
			f := tyField{code: r.code, text: r.text, comment: tyMemberComment(m, r), member: e.index}
			if m.Name == "" {
				f.embed = true
				f.name = uniqueName(fieldNames, r.goString())
			} else {
				f.name = goNames[e.index]
				f.comment = tyFieldComment(m, f.name, r)
				if tyIsCharArray(m.Type) {
					p.cstrs = append(p.cstrs, tyCString{field: f.name, member: m.Name, n: r.size})
				}
			}
			p.fields = append(p.fields, f)
			p.align = max(p.align, r.align)
			continue
		}
		get := goNames[e.index]
		if get == "" {
			get = uniqueName(fieldNames, fmt.Sprintf("Anon%d", anon-1))
		}
		name := uniqueName(fieldNames, get+"Bytes")
		set := uniqueName(fieldNames, "Set"+get)
		code, text := g.byteArray(r.size)
		p.fields = append(p.fields, tyField{name: name, code: code, text: text, member: e.index,
			comment: fmt.Sprintf("%s at offset %d, which Go cannot align: use %s and %s", r.cName, e.lo, get, set)})
		pending = append(pending, tyAccessor{get: get, set: set, member: m, r: r, storage: name, base: e.lo})
	}
	if cur > p.size {
		return fmt.Errorf("%s: members end at %d, beyond its size %d", p.cName, cur, p.size)
	}
	g.pad(p, cur, p.size)
	p.align = max(p.align, 1)
	if err := g.nameAccessors(p, fieldNames, pending); err != nil {
		return err
	}
	// Named last, so that an accessor never takes a member's name.
	for i := range p.cstrs {
		p.cstrs[i].method = uniqueName(fieldNames, p.cstrs[i].field+"String")
	}
	return nil
}

// pad appends to p the padding field of the bytes from to to, if any.
func (g *TypeGen) pad(p *tyPlan, from, to uint32) {
	if to > from {
		code, text := g.byteArray(to - from)
		p.fields = append(p.fields, tyField{name: "_", code: code, text: text, member: -1})
	}
}

func tyBitNames(ms []btf.Member) string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = tyOr(m.Name, "(anon)") + ":" + strconv.FormatUint(uint64(m.BitfieldSize), 10)
	}
	return strings.Join(names, ", ")
}

func (g *TypeGen) nameAccessors(p *tyPlan, names map[string]bool, pending []tyAccessor) error {
	anon := 0
	for i := range pending {
		a := &pending[i]
		if a.member.BitfieldSize > 0 {
			if a.r.scalar == tyNotScalar {
				return fmt.Errorf("%s bitfield %s: type %s is not an integer", p.cName, a.member.Name, a.r.cName)
			}
			if a.member.BitfieldSize > 64 {
				return fmt.Errorf("%s bitfield %s: wider than 64 bits", p.cName, a.member.Name)
			}
			if lo, hi := a.bitBytes(); hi-lo > 8 {
				return fmt.Errorf("%s bitfield %s: spans %d bytes, more than a uint64 holds", p.cName, a.member.Name, hi-lo)
			}
		}
		if a.set != "" {
			continue // named where its storage was
		}
		if a.get == "" {
			a.get = uniqueName(names, fmt.Sprintf("Anon%d", anon))
			anon++
		}
		a.set = uniqueName(names, "Set"+a.get)
	}
	p.access = pending
	return nil
}

// bitBytes is the byte range of a bitfield relative to its storage.
func (a tyAccessor) bitBytes() (lo, hi uint32) {
	off := uint32(a.member.Offset)
	return off/8 - a.base, (off+uint32(a.member.BitfieldSize)+7)/8 - a.base
}

func (g *TypeGen) planUnion(p *tyPlan, members []btf.Member) error {
	fieldNames := map[string]bool{}
	goNames := memberNames(members, fieldNames)
	capAlign := tyCap(p.size)
	reprs := make([]tyRepr, len(members))
	stored, anon := -1, 0
	for i, m := range members {
		r, err := g.memberRepr(p, m, goNames[i], anon)
		if m.Name == "" {
			anon++
		}
		if err != nil {
			return err
		}
		reprs[i] = r
		if m.BitfieldSize > 0 || m.Offset != 0 || r.size == 0 || r.align > capAlign || r.size > p.size {
			continue
		}
		if stored < 0 || r.size > reprs[stored].size {
			stored = i
		}
	}
	var pending []tyAccessor
	var cur uint32
	if stored >= 0 {
		m, r := members[stored], reprs[stored]
		f := tyField{code: r.code, text: r.text, comment: tyMemberComment(m, r), member: stored}
		if m.Name == "" {
			f.embed = true
			f.name = uniqueName(fieldNames, r.goString())
		} else {
			f.name = goNames[stored]
			f.comment = tyFieldComment(m, f.name, r)
		}
		p.fields = append(p.fields, f)
		p.align = r.align
		cur = r.size
	} else {
		code, text := g.byteArray(p.size)
		p.fields = append(p.fields, tyField{name: uniqueName(fieldNames, "Raw"), code: code, text: text,
			comment: "the union's bytes: use the accessor methods", member: -1})
		cur = p.size
	}
	g.pad(p, cur, p.size)
	p.align = max(p.align, 1)
	for i, m := range members {
		if i == stored {
			continue
		}
		if reprs[i].size == 0 {
			p.omitted = append(p.omitted, tyOr(m.Name, "(anon)"))
			continue
		}
		if m.BitfieldSize == 0 && (m.Offset != 0 || reprs[i].size > p.size) {
			return fmt.Errorf("%s member %s: does not fit the union", p.cName, m.Name)
		}
		pending = append(pending, tyAccessor{get: goNames[i], member: m, r: reprs[i]})
	}
	return g.nameAccessors(p, fieldNames, pending)
}

func (g *TypeGen) render(p *tyPlan) []jen.Code {
	if p.enum != nil {
		return g.renderEnum(p)
	}
	doc := p.goName + " is " + p.cName + " (" + tySize(p.size) + " bytes) with its C layout."
	if w := g.which[g.key(p.c)]; w != "" {
		doc += " It is the " + w + "."
	}
	if len(p.omitted) > 0 {
		doc += fmt.Sprintf(" Zero-sized members left out: %s.", strings.Join(p.omitted, ", "))
	}
	if g.verb != nil {
		if w := g.structVerbatim(p, doc); w != nil {
			out := []jen.Code{g.verb.placeholder(w), g.sizeCheck(p)}
			return g.renderMethods(p, out)
		}
	}
	// structs.HostLayout tells the compiler that the layout is the C one
	// and must stay as declared; zero-sized and first, it adds no bytes.
	fields := make([]jen.Code, 0, len(p.fields)+1)
	fields = append(fields, jen.Id("_").Qual("structs", "HostLayout"))
	for _, f := range p.fields {
		var s *jen.Statement
		if f.embed {
			s = jen.Add(f.code)
		} else {
			s = jen.Id(f.name).Add(f.code)
		}
		if f.comment != "" {
			s = s.Add(gocomment.Line(f.comment))
		}
		fields = append(fields, s)
	}
	out := []jen.Code{
		gocomment.Comment(doc).Line().Type().Id(p.goName).Struct(fields...),
		g.sizeCheck(p),
	}
	return g.renderMethods(p, out)
}

// structVerbatim is the declaration of struct p as a verbatim part, the
// fields and their comments aligned as go/format aligns them; nil unless
// every field is a plain name and type, with a plain comment or none.
func (g *TypeGen) structVerbatim(p *tyPlan, doc string) *vtext {
	if !token.IsIdentifier(p.goName) {
		return nil
	}
	width := 1 // the "_" of the structs.HostLayout field
	for _, f := range p.fields {
		if f.embed || !tyASCIIName(f.name) || !tyPlainType(f.text) || f.comment != "" && !tyPlainComment(f.comment) {
			return nil
		}
		width = max(width, len(f.name))
	}
	w := g.verb.part()
	if !w.docComment(doc) {
		return nil
	}
	w.s("type ", p.goName, " struct {\n\t_").blanks(width).qual("structs", "HostLayout").s("\n")
	// go/format aligns the comments of each run of consecutive commented
	// fields one blank after the run's longest type.
	for i := 0; i < len(p.fields); {
		end, typeWidth := i, 0
		for end < len(p.fields) && p.fields[end].comment != "" {
			if !tyASCIIName(strings.TrimLeft(p.fields[end].text, "[]0123456789")) {
				return nil
			}
			typeWidth = max(typeWidth, len(p.fields[end].text))
			end++
		}
		if end == i {
			end++
		}
		for _, f := range p.fields[i:end] {
			w.s("\t", f.name).blanks(width - len(f.name) + 1).s(f.text)
			if f.comment != "" {
				w.blanks(typeWidth-len(f.text)+1).s("// ", f.comment)
			}
			w.s("\n")
		}
		i = end
	}
	w.s("}\n")
	return w
}

// tyPlainComment reports whether a field comment is one go/format leaves
// as jennifer writes it and whose width is its length: printable ASCII on
// one line, without blanks at its end or a leading slash.
func tyPlainComment(c string) bool {
	if strings.HasPrefix(c, "/") || strings.TrimRight(c, " ") != c {
		return false
	}
	for i := 0; i < len(c); i++ {
		if c[i] < ' ' || c[i] > '~' {
			return false
		}
	}
	return true
}

// tyASCIIName reports whether s is a Go identifier of ASCII characters
// (whose width go/format's alignment counts in bytes).
func tyASCIIName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 {
			return false
		}
	}
	return token.IsIdentifier(s)
}

// tyPlainType reports whether text is a type name with array prefixes
// ([4][2]T), which go/format writes as it is.
func tyPlainType(text string) bool {
	for strings.HasPrefix(text, "[") {
		end := strings.IndexByte(text, ']')
		if end < 2 || !tyDecimal(text[1:end]) {
			return false
		}
		text = text[end+1:]
	}
	return token.IsIdentifier(text)
}

// renderMethods appends the accessor and C string methods of p to out.
func (g *TypeGen) renderMethods(p *tyPlan, out []jen.Code) []jen.Code {
	if len(p.access) == 0 && len(p.cstrs) == 0 {
		return out
	}
	if g.verb != nil {
		if w := g.methodsVerbatim(p); w != nil {
			return append(out, g.verb.placeholder(w))
		}
	}
	for _, a := range p.access {
		out = append(out, g.renderAccessor(p, a)...)
	}
	for _, c := range p.cstrs {
		out = append(out, gocomment.Comment(c.doc(p)).Line().
			Func().Params(jen.Id("s").Op("*").Id(p.goName)).Id(c.method).Params().String().Block(
			jen.Return(jen.Qual(g.Bridge, "CString").Call(jen.Id("s").Dot(c.field).Index(jen.Op(":")))),
		))
	}
	return out
}

func (c tyCString) doc(p *tyPlan) string {
	return c.method + " returns " + p.cName + "." + c.member + " (char[" + tySize(c.n) + "]) up to its first NUL byte."
}

// methodsVerbatim is renderMethods's methods as one verbatim part, nil if
// a name or doc comment is not plain.
func (g *TypeGen) methodsVerbatim(p *tyPlan) *vtext {
	names := []string{p.goName}
	for _, a := range p.access {
		names = append(names, a.get, a.set, a.storage)
	}
	for _, c := range p.cstrs {
		names = append(names, c.method, c.field)
	}
	for _, n := range names {
		if n != "" && !token.IsIdentifier(n) {
			return nil
		}
	}
	w := g.verb.part()
	recv := "func (s *" + p.goName + ") "
	first := true
	// doc starts a method with its doc comment.
	doc := func(text string) bool {
		if !first {
			w.s("\n")
		}
		first = false
		return w.docComment(text)
	}
	for _, a := range p.access {
		what := a.what(p)
		if a.member.BitfieldSize > 0 {
			e := g.bitExprs(a)
			if !doc(e.getDoc(a, what)) {
				return nil
			}
			w.s(recv, a.get, "() ").goType(a.r).s(" {\n\tb := ")
			w.storage(p, a, e.lo, e.hi).s("\n\tx := ", e.load, "\n\treturn ", e.get, "\n}\n")
			if !doc(e.setDoc(a, what)) {
				return nil
			}
			w.s(recv, a.set, "(v ").goType(a.r).s(") {\n\tb := ")
			w.storage(p, a, e.lo, e.hi).s("\n\tx := ", e.load, "\n")
			if a.r.scalar == tyBool {
				w.s("\tvar u uint64\n\tif v {\n\t\tu = 1\n\t}\n")
			}
			w.s("\tx = ", e.set, "\n")
			for i, store := range e.stores {
				w.s("\tb[").num(i).s("] = byte(", store, ")\n")
			}
			w.s("}\n")
			continue
		}
		n := a.r.size
		if !doc(a.getDoc(what)) {
			return nil
		}
		w.s(recv, a.get, "() ").goType(a.r).s(" {\n\tvar v ").goType(a.r).s("\n\tcopy(")
		w.asBytes("&v", n).s(", ").storage(p, a, 0, n).s(")\n\treturn v\n}\n")
		if !doc(a.setDoc(what)) {
			return nil
		}
		w.s(recv, a.set, "(v ").goType(a.r).s(") {\n\tcopy(")
		w.storage(p, a, 0, n).s(", ").asBytes("&v", n).s(")\n}\n")
	}
	for _, c := range p.cstrs {
		if !doc(c.doc(p)) {
			return nil
		}
		w.s(recv, c.method, "() string {\n\treturn ").qual(g.Bridge, "CString").s("(s.", c.field, "[:])\n}\n")
	}
	return w
}

// goType appends the Go type of r.
func (w *vtext) goType(r tyRepr) *vtext {
	if tyPlainType(r.text) {
		return w.s(r.text)
	}
	return w.typ(r.code)
}

// asBytes appends tyAsBytes(ptr, n).
func (w *vtext) asBytes(ptr string, n uint32) *vtext {
	w.qual("unsafe", "Slice").s("((*byte)(").qual("unsafe", "Pointer")
	return w.s("(", ptr, ")), ").num(int(n)).s(")")
}

// storage appends a.storageBytes(p, lo, hi).
func (w *vtext) storage(p *tyPlan, a tyAccessor, lo, hi uint32) *vtext {
	if a.storage != "" {
		w.s("s.", a.storage)
	} else {
		w.asBytes("s", p.size)
	}
	return w.s("[").num(int(lo)).s(":").num(int(hi)).s("]")
}

// sizeCheck is the declaration that fails to compile unless the Go type
// of p has its C size.
func (g *TypeGen) sizeCheck(p *tyPlan) jen.Code {
	doc := "Fails to compile unless " + p.goName + " has the " + tySize(p.size) + " bytes of " + p.cName + "."
	if g.verb != nil && token.IsIdentifier(p.goName) {
		w := g.verb.part()
		if w.docComment(doc) {
			w.s("var _ = [1]struct{}{}[").qual("unsafe", "Sizeof").s("(", p.goName, "{})-").num(int(p.size)).s("]\n")
			return g.verb.placeholder(w)
		}
	}
	return gocomment.Comment(doc).Line().
		Var().Id("_").Op("=").Index(jen.Lit(1)).Struct().Values().
		Index(jen.Qual("unsafe", "Sizeof").Call(jen.Id(p.goName).Values()).Op("-").Lit(int(p.size)))
}

func (g *TypeGen) renderEnum(p *tyPlan) []jen.Code {
	if g.verb != nil {
		if w := g.enumVerbatim(p); w != nil {
			return []jen.Code{g.verb.placeholder(w)}
		}
	}
	out := []jen.Code{
		gocomment.Commentf("%s is %s (%d bytes).", p.goName, p.cName, p.size).Line().Type().Id(p.goName).Add(p.under),
	}
	if len(p.consts) > 0 {
		defs := make([]jen.Code, len(p.consts))
		for i, c := range p.consts {
			defs[i] = jen.Id(c.name).Id(p.goName).Op("=").Id(c.value)
		}
		out = append(out, jen.Const().Defs(defs...))
		var cases []jen.Code
		for _, c := range p.namedValues() {
			cases = append(cases, jen.Case(jen.Id(c.name)).Block(jen.Return(jen.Lit(c.cname))))
		}
		format, conv := p.formatFunc()
		out = append(out, gocomment.Comment(enumStringDoc).Line().
			Func().Params(jen.Id("e").Id(p.goName)).Id("String").Params().String().Block(
			jen.Switch(jen.Id("e")).Block(cases...),
			jen.Return(jen.Lit(p.goName+"(").Op("+").Qual("strconv", format).Call(jen.Id(conv).Call(jen.Id("e")), jen.Lit(10)).Op("+").Lit(")")),
		))
	}
	return out
}

// enumStringDoc is the doc comment of an enum's String method.
const enumStringDoc = "String is the C name of e (the first, when the enum gives its value several), or the type and number of a value the enum does not name."

// namedValues are the enum's constants, the first of each value.
func (p *tyPlan) namedValues() []tyConst {
	var out []tyConst
	seen := map[string]bool{}
	for _, c := range p.consts {
		if !seen[c.value] {
			seen[c.value] = true
			out = append(out, c)
		}
	}
	return out
}

// formatFunc is the strconv function that writes the enum's values in
// decimal, and the conversion to its argument type.
func (p *tyPlan) formatFunc() (format, conv string) {
	if p.scalar == tySigned {
		return "FormatInt", "int64"
	}
	return "FormatUint", "uint64"
}

// enumVerbatim is renderEnum as a verbatim part, the constants aligned
// as go/format aligns them; nil if a name or value is not plain.
func (g *TypeGen) enumVerbatim(p *tyPlan) *vtext {
	if !token.IsIdentifier(p.goName) {
		return nil
	}
	width := 0
	for _, c := range p.consts {
		if !tyASCIIName(c.name) || !tyDecimal(c.value) {
			return nil
		}
		width = max(width, len(c.name))
	}
	w := g.verb.part()
	if !w.docComment(p.goName + " is " + p.cName + " (" + tySize(p.size) + " bytes).") {
		return nil
	}
	w.s("type ", p.goName, " ", p.underT, "\n")
	if len(p.consts) > 0 {
		w.s("\nconst (\n")
		for _, c := range p.consts {
			w.s("\t", c.name).blanks(width-len(c.name)+1).s(p.goName, " = ", c.value, "\n")
		}
		w.s(")\n\n")
		if !w.docComment(enumStringDoc) {
			return nil
		}
		w.s("func (e ", p.goName, ") String() string {\n\tswitch e {\n")
		for _, c := range p.namedValues() {
			w.s("\tcase ", c.name, ":\n\t\treturn ").lit(c.cname).s("\n")
		}
		format, conv := p.formatFunc()
		w.s("\t}\n\treturn ").lit(p.goName+"(").s(" + ").qual("strconv", format).s("(", conv, "(e), 10) + \")\"\n}\n")
	}
	return w
}

// tyDecimal reports whether s is a decimal integer, which go/format
// writes as it is.
func tyDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// tyAsBytes is unsafe.Slice((*byte)(unsafe.Pointer(ptr)), n).
func tyAsBytes(ptr jen.Code, n uint32) *jen.Statement {
	return jen.Qual("unsafe", "Slice").Call(
		jen.Parens(jen.Op("*").Byte()).Call(jen.Qual("unsafe", "Pointer").Call(ptr)),
		jen.Lit(int(n)))
}

// storageBytes is the slice [lo:hi] of the accessor's storage.
func (a tyAccessor) storageBytes(p *tyPlan, lo, hi uint32) *jen.Statement {
	if a.storage != "" {
		return jen.Id("s").Dot(a.storage).Index(jen.Lit(int(lo)).Op(":").Lit(int(hi)))
	}
	return tyAsBytes(jen.Id("s"), p.size).Index(jen.Lit(int(lo)).Op(":").Lit(int(hi)))
}

// what names the member of an accessor in its doc comments.
func (a tyAccessor) what(p *tyPlan) string {
	return p.cName + "." + tyOr(a.member.Name, "(anon)")
}

func (g *TypeGen) renderAccessor(p *tyPlan, a tyAccessor) []jen.Code {
	recv := jen.Id("s").Op("*").Id(p.goName)
	what := a.what(p)
	if a.member.BitfieldSize > 0 {
		return g.renderBitfield(p, a, recv, what)
	}
	// The bytes are copied in memory order, which is the object's byte
	// order wherever the build constraints let this code run.
	n := a.r.size
	bytes := a.storageBytes(p, 0, n)
	return []jen.Code{
		gocomment.Comment(a.getDoc(what)).Line().
			Func().Params(recv).Id(a.get).Params().Add(a.r.code).Block(
			jen.Var().Id("v").Add(a.r.code),
			jen.Copy(tyAsBytes(jen.Op("&").Id("v"), n), bytes),
			jen.Return(jen.Id("v")),
		),
		gocomment.Comment(a.setDoc(what)).Line().
			Func().Params(jen.Id("s").Op("*").Id(p.goName)).Id(a.set).Params(jen.Id("v").Add(a.r.code)).Block(
			jen.Copy(a.storageBytes(p, 0, n), tyAsBytes(jen.Op("&").Id("v"), n)),
		),
	}
}

func (a tyAccessor) getDoc(what string) string {
	return a.get + " returns " + what + " (" + a.r.cName + ")."
}

func (a tyAccessor) setDoc(what string) string {
	return a.set + " sets " + what + " (" + a.r.cName + ")."
}

// renderBitfield writes a getter and setter that load the bytes holding the
// bitfield into a uint64 and shift. BTF counts a bitfield's bit offset from
// the start of the struct: in a little-endian object bit 0 is the least
// significant bit of byte 0, in a big-endian object the most significant.
// The arithmetic is spelled as Go source because it is plain expressions.
func (g *TypeGen) renderBitfield(p *tyPlan, a tyAccessor, recv jen.Code, what string) []jen.Code {
	e := g.bitExprs(a)
	setBody := []jen.Code{
		jen.Id("b").Op(":=").Add(a.storageBytes(p, e.lo, e.hi)),
		jen.Id("x").Op(":=").Id(e.load),
	}
	if a.r.scalar == tyBool {
		setBody = append(setBody, jen.Var().Id("u").Uint64(), jen.If(jen.Id("v")).Block(jen.Id("u").Op("=").Lit(1)))
	}
	setBody = append(setBody, jen.Id("x").Op("=").Id(e.set))
	for i, store := range e.stores {
		setBody = append(setBody, jen.Id("b").Index(jen.Lit(i)).Op("=").Byte().Call(jen.Id(store)))
	}
	return []jen.Code{
		gocomment.Comment(e.getDoc(a, what)).Line().
			Func().Params(recv).Id(a.get).Params().Add(a.r.code).Block(
			jen.Id("b").Op(":=").Add(a.storageBytes(p, e.lo, e.hi)),
			jen.Id("x").Op(":=").Id(e.load),
			jen.Return(jen.Id(e.get)),
		),
		gocomment.Comment(e.setDoc(a, what)).Line().
			Func().Params(jen.Id("s").Op("*").Id(p.goName)).Id(a.set).Params(jen.Id("v").Add(a.r.code)).Block(setBody...),
	}
}

// tyBitExprs is the arithmetic of a bitfield's accessors, as Go source in
// go/format's form: the getter and setter load the bytes lo to hi of the
// storage (b) into a uint64 (x) and shift.
type tyBitExprs struct {
	lo, hi, size uint32
	load         string   // x, from b
	get          string   // the value, from x
	set          string   // x with v stored in it (u for a bool)
	stores       []string // b[i], from x
}

// bitExprs writes the arithmetic of a bitfield accessor. BTF counts a
// bitfield's bit offset from the start of the struct: in a little-endian
// object bit 0 is the least significant bit of byte 0, in a big-endian
// object the most significant. The arithmetic is spelled as Go source
// because it is plain expressions.
func (g *TypeGen) bitExprs(a tyAccessor) tyBitExprs {
	lo, hi := a.bitBytes()
	n := hi - lo
	size := uint32(a.member.BitfieldSize)
	rel := uint32(a.member.Offset) - 8*(lo+a.base)
	shift := rel
	big := g.order == binary.BigEndian
	if big {
		shift = 8*n - rel - size
	}
	mask := uint64(1)<<size - 1
	if size == 64 {
		mask = ^uint64(0)
	}
	byteShift := func(i uint32) uint32 {
		if big {
			return 8 * (n - 1 - i)
		}
		return 8 * i
	}
	e := tyBitExprs{lo: lo, hi: hi, size: size}
	// strconv rather than fmt: an object may have hundreds of bitfields.
	itoa := func(n uint32) string { return strconv.FormatUint(uint64(n), 10) }
	hexMask := "0x" + strconv.FormatUint(mask, 16) // fmt's %#x
	var load []string
	for i := range n {
		term := "uint64(b[" + itoa(i) + "])"
		if s := byteShift(i); s > 0 {
			term += "<<" + itoa(s)
		}
		load = append(load, term)
	}
	e.load = strings.Join(load, " | ")
	switch a.r.scalar {
	case tyBool:
		e.get = "x>>" + itoa(shift) + "&1 != 0"
	case tySigned:
		e.get = a.r.goString() + "(int64(x<<" + itoa(64-shift-size) + ") >> " + itoa(64-size) + ")"
	default:
		e.get = a.r.goString() + "(x >> " + itoa(shift) + " & " + hexMask + ")"
	}
	value := "uint64(v)"
	if a.r.scalar == tyBool {
		value = "u"
	}
	e.set = "x&^(" + hexMask + "<<" + itoa(shift) + ") | (" + value + "&" + hexMask + ")<<" + itoa(shift)
	for i := range n {
		store := "x"
		if s := byteShift(i); s > 0 {
			store = "x >> " + itoa(s)
		}
		e.stores = append(e.stores, store)
	}
	return e
}

func (e tyBitExprs) getDoc(a tyAccessor, what string) string {
	return a.get + " returns the bitfield " + what + " (" + a.r.cName + ":" + tySize(e.size) + ")."
}

func (e tyBitExprs) setDoc(a tyAccessor, what string) string {
	size := tySize(e.size)
	return a.set + " sets the bitfield " + what + " (" + a.r.cName + ":" + size + "), keeping its low " + size + " bits."
}

// goString is r's type expression as text.
func (r tyRepr) goString() string {
	if r.text != "" {
		return r.text
	}
	return tyGoString(r.code)
}

// tyGoString renders a type expression such as uint32 or Color.
func tyGoString(c jen.Code) string {
	return fmt.Sprintf("%#v", c)
}

// key identifies a C type across copies of the same BTF by its whole
// shape: cilium/ebpf hands out separate copies of one C type for maps and for
// variables, and BTF may hold different types of one name (a kernel's or a
// linked object's, from several compilation units). Identical anonymous
// types therefore share one Go type, and same-named different types get
// different ones. Pointers are keyed by their target's name only, which
// ends the recursion of self-referencing types. A key names the types it
// contains by their keys' numbers (see ref), so that keys stay short
// however deep types nest.
func (g *TypeGen) key(t btf.Type) string {
	t = btf.QualifiedType(t)
	if k, ok := g.keys[t]; ok {
		if k == "" {
			// t contains itself by value (malformed BTF): the
			// recursion ends here instead of overflowing.
			return "cycle " + tyCName(t)
		}
		return k
	}
	// Marked, with no key yet, while its key is built.
	g.keys[t] = ""
	// strconv rather than fmt: keys are built for every type the skeleton
	// reaches.
	var b []byte
	num := func(n uint64) { b = strconv.AppendUint(b, n, 10) }
	ref := func(t btf.Type) {
		k := g.key(t)
		id, ok := g.ids[k]
		if !ok {
			id = len(g.ids)
			g.ids[k] = id
		}
		b = append(b, '#')
		num(uint64(id))
	}
	head := func(kind, name string, size uint32) {
		b = append(append(append(append(b, kind...), ' '), name...), ' ')
		num(uint64(size))
	}
	writeMembers := func(ms []btf.Member) {
		for _, m := range ms {
			b = append(append(b, m.Name...), '@')
			num(uint64(m.Offset))
			b = append(b, ':')
			num(uint64(m.BitfieldSize))
			b = append(b, ' ')
			ref(m.Type)
			b = append(b, "; "...)
		}
		b = append(b, '}')
	}
	switch t := t.(type) {
	case *btf.Struct:
		head("struct", t.Name, t.Size)
		b = append(b, " {"...)
		writeMembers(t.Members)
	case *btf.Union:
		head("union", t.Name, t.Size)
		b = append(b, " {"...)
		writeMembers(t.Members)
	case *btf.Enum:
		head("enum", t.Name, t.Size)
		b = strconv.AppendBool(append(b, ' '), t.Signed)
		b = append(b, " {"...)
		for _, v := range t.Values {
			b = append(append(b, v.Name...), '=')
			num(v.Value)
			b = append(b, ' ')
		}
		b = append(b, '}')
	case *btf.Array:
		b = append(b, '[')
		num(uint64(t.Nelems))
		b = append(b, ']')
		ref(t.Type)
	case *btf.Typedef:
		b = append(append(append(b, "typedef "...), t.Name...), ' ')
		ref(t.Type)
	case *btf.Int:
		head("int", t.Name, t.Size)
		b = append(b, ' ')
		num(uint64(t.Encoding))
	default:
		b = append(b, tyCName(t)...)
	}
	k := string(b)
	g.keys[t] = k
	return k
}
