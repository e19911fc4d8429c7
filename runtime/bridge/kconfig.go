package bridge

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/features"
)

// kconfigMap is the name of the map that holds the values of the object's
// .kconfig externs, as libbpf and cilium/ebpf name it (cilium/ebpf freezes
// a map of this name after filling it).
const kconfigMap = ".kconfig"

// Kconfig is the support of .kconfig externs (extern ... __kconfig): a
// skeleton of an object that reads them passes it to ParseObject.
var Kconfig = Feature{func() {
	kconfigSupport.Store(&kconfigFuncs{resolve: resolveKconfig, normalize: normalizeKconfig})
}}

// resolveKconfig gives the .kconfig externs the kernel programs of k read
// their values with libbpf's semantics, which cilium/ebpf covers only in
// part: a __weak extern the kernel does not have is zero (cilium/ebpf
// refuses the object), a strong one is an error naming it;
// LINUX_KERNEL_VERSION, LINUX_HAS_BPF_COOKIE and LINUX_HAS_SYSCALL_WRAPPER
// are filled in, other LINUX_ names are zero when weak; typedef'd types
// (extern __u32 LINUX_KERNEL_VERSION __kconfig) are read through.
//
// cilium/ebpf keeps its own .kconfig map spec out of reach (in the
// instructions' private metadata), so the externs are not left to it: each
// load of an extern's address is replaced by a load from a map named
// .kconfig that k gets, filled here. Only the loads ParseObject marked are
// replaced (a spec cilium/ebpf parsed itself keeps its own handling); k's
// instructions must be its own (KernelSpec copies them).
func resolveKconfig(k *ebpf.CollectionSpec) error {
	if k == nil {
		return nil
	}
	progs := make([]*ebpf.ProgramSpec, 0, len(k.Programs))
	for _, p := range k.Programs {
		progs = append(progs, p)
	}
	ms, err := kconfigMapSpec(k, progs, true)
	if ms == nil || err != nil {
		return err
	}
	offsets := kconfigOffsets(k)
	for _, p := range k.Programs {
		for i, ins := range p.Instructions {
			if e, ok := ins.Metadata.Get(kconfigKey{}).(kconfigExtern); ok {
				// The instruction's immediate is the addend of its
				// relocation, an offset into the extern.
				p.Instructions[i] = kconfigLoad(ins, offsets[e.name].Offset+uint32(ins.Constant))
			}
		}
	}
	k.Maps[kconfigMap] = ms
	return nil
}

// kconfigOffsets returns the place of each extern in spec's .kconfig
// section, nil when it has none.
func kconfigOffsets(spec *ebpf.CollectionSpec) map[string]btf.VarSecinfo {
	var ds *btf.Datasec
	if spec.Types == nil || spec.Types.TypeByName(kconfigMap, &ds) != nil {
		return nil
	}
	offsets := map[string]btf.VarSecinfo{}
	for _, vsi := range ds.Vars {
		offsets[vsi.Type.TypeName()] = vsi
	}
	return offsets
}

// kconfigMapSpec returns the .kconfig map of spec for the externs progs
// read (nil when they read none), filled with their values when fill is
// set and zero otherwise (a translation's stand-in): libbpf's semantics,
// as resolveKconfig says, and the same for kernel and user-space
// programs.
func kconfigMapSpec(spec *ebpf.CollectionSpec, progs []*ebpf.ProgramSpec, fill bool) (*ebpf.MapSpec, error) {
	var ds *btf.Datasec
	if spec.Types == nil || spec.Types.TypeByName(kconfigMap, &ds) != nil {
		return nil, nil
	}
	offsets := kconfigOffsets(spec)
	// The externs the programs read, and whether each is weak, as
	// ParseObject marked them.
	weak := map[string]bool{}
	var order []string
	for _, p := range progs {
		for _, ins := range p.Instructions {
			e, ok := ins.Metadata.Get(kconfigKey{}).(kconfigExtern)
			if !ok {
				continue
			}
			if _, ok := offsets[e.name]; !ok {
				return nil, fmt.Errorf("program %s: extern %s is not in .kconfig", p.Name, e.name)
			}
			if _, seen := weak[e.name]; !seen {
				order = append(order, e.name)
			}
			weak[e.name] = e.weak
		}
	}
	if len(order) == 0 {
		return nil, nil
	}
	slices.Sort(order)
	data := make([]byte, ds.Size)
	var kernel map[string]string
	for _, name := range order {
		vsi := offsets[name]
		if uint64(vsi.Offset)+uint64(vsi.Size) > uint64(len(data)) {
			return nil, fmt.Errorf("extern %s: outside .kconfig (%d bytes at offset %d of %d)", name, vsi.Size, vsi.Offset, len(data))
		}
		if !fill {
			continue
		}
		dst := data[vsi.Offset : vsi.Offset+vsi.Size]
		typ := vsi.Type.(*btf.Var).Type
		value, known, err := linuxValue(name)
		if err != nil {
			return nil, fmt.Errorf("extern %s: %w", name, err)
		}
		if !known && strings.HasPrefix(name, "CONFIG_") {
			if kernel == nil {
				if kernel, err = kernelConfig(order); err != nil {
					return nil, fmt.Errorf("extern %s: %w", name, err)
				}
			}
			value, known = kernel[name]
		}
		switch {
		case !known && weak[name]:
			continue // a weak extern the kernel lacks is zero
		case !known && strings.HasPrefix(name, "CONFIG_"):
			return nil, fmt.Errorf("extern %s: this kernel's configuration does not set it (declare it __weak to read 0)", name)
		case !known:
			return nil, fmt.Errorf("extern %s: not a kconfig name skelgen knows (CONFIG_*, LINUX_KERNEL_VERSION, LINUX_HAS_BPF_COOKIE, LINUX_HAS_SYSCALL_WRAPPER)", name)
		}
		if err := putKconfig(dst, typ, value); err != nil {
			return nil, fmt.Errorf("extern %s = %s: %w", name, value, err)
		}
	}
	return &ebpf.MapSpec{
		Name:       kconfigMap,
		Type:       ebpf.Array,
		KeySize:    4,
		ValueSize:  ds.Size,
		MaxEntries: 1,
		Flags:      bpfFRdonlyProg,
		Contents:   []ebpf.MapKV{{Key: uint32(0), Value: data}},
	}, nil
}

// bpfFRdonlyProg is BPF_F_RDONLY_PROG: programs cannot write the map.
const bpfFRdonlyProg = 1 << 7

// kconfigLoad is ins, a load of an extern's address, as a load of the
// address of its value in the .kconfig map, keeping what cilium/ebpf needs
// of ins's metadata (symbol, line and function information) and dropping
// the rest, its private .kconfig mark among them.
func kconfigLoad(ins asm.Instruction, offset uint32) asm.Instruction {
	n := asm.LoadMapValue(ins.Dst, 0, offset).WithReference(kconfigMap)
	if sym := ins.Symbol(); sym != "" {
		n = n.WithSymbol(sym)
	}
	if src := ins.Source(); src != nil {
		n = n.WithSource(src)
	}
	if fn := btf.FuncMetadata(&ins); fn != nil {
		n = btf.WithFuncMetadata(n, fn)
	}
	return n
}

// linuxValue is the value libbpf gives the LINUX_ externs it fills in;
// known is false for other names.
func linuxValue(name string) (value string, known bool, err error) {
	switch name {
	case "LINUX_KERNEL_VERSION":
		rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
		if err != nil {
			return "", false, fmt.Errorf("reading the kernel release: %w", err)
		}
		v, err := kernelVersion(strings.TrimSpace(string(rel)))
		if err != nil {
			return "", false, err
		}
		return strconv.FormatUint(uint64(v), 10), true, nil
	case "LINUX_HAS_BPF_COOKIE":
		// libbpf's probe: a tracing program may call bpf_get_attach_cookie.
		err := features.HaveProgramHelper(ebpf.TracePoint, asm.FnGetAttachCookie)
		if errors.Is(err, ebpf.ErrNotSupported) {
			return "0", true, nil
		}
		if err != nil {
			return "", false, fmt.Errorf("probing bpf_get_attach_cookie: %w", err)
		}
		return "1", true, nil
	case "LINUX_HAS_SYSCALL_WRAPPER":
		// Syscalls go through wrappers when the kernel has the
		// architecture's prefixed entry point of bpf(2) (__x64_sys_bpf).
		has, err := syscallWrappers()
		if err != nil {
			return "", false, err
		}
		if has {
			return "1", true, nil
		}
		return "0", true, nil
	}
	return "", false, nil
}

// syscallWrappers reports whether the kernel's syscalls go through
// wrappers: whether it has the architecture's prefixed entry point of
// bpf(2) (__x64_sys_bpf).
func syscallWrappers() (bool, error) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return false, fmt.Errorf("reading the kernel BTF: %w", err)
	}
	var fn *btf.Func
	return spec.TypeByName(syscallPrefix()+"sys_bpf", &fn) == nil, nil
}

// syscallPrefix is the prefix of the architecture's syscall wrappers, as
// libbpf names them.
func syscallPrefix() string {
	switch goruntime.GOARCH {
	case "amd64":
		return "__x64_"
	case "386":
		return "__ia32_"
	case "arm64":
		return "__arm64_"
	case "arm":
		return "__arm_"
	case "s390x":
		return "__s390x_"
	case "riscv64":
		return "__riscv_"
	case "ppc64", "ppc64le":
		return "__powerpc64_"
	case "loong64":
		return "__loongarch_"
	case "mips64", "mips64le", "mips", "mipsle":
		return "__mips_"
	}
	return "__" + goruntime.GOARCH + "_"
}

// kernelVersion is KERNEL_VERSION(a, b, c) of a release such as
// 6.18.0-1-amd64, the sublevel capped at 255 as in the kernel's macro.
func kernelVersion(release string) (uint32, error) {
	var parts [3]uint64
	rest := release
	for i := range parts {
		end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if end < 0 {
			end = len(rest)
		}
		if end == 0 {
			if i < 2 {
				return 0, fmt.Errorf("kernel release %q: want major.minor[.patch]", release)
			}
			break
		}
		n, err := strconv.ParseUint(rest[:end], 10, 16)
		if err != nil {
			return 0, fmt.Errorf("kernel release %q: %w", release, err)
		}
		parts[i] = n
		rest = rest[end:]
		if !strings.HasPrefix(rest, ".") {
			if i == 0 {
				return 0, fmt.Errorf("kernel release %q: want major.minor[.patch]", release)
			}
			break
		}
		rest = rest[1:]
	}
	return uint32(parts[0]<<16 | parts[1]<<8 | min(parts[2], 255)), nil
}

// kernelConfig reads the values of names from the running kernel's
// configuration: /boot/config-<release>, else /proc/config.gz, as libbpf
// looks for it. An option the file does not set is absent from the result.
func kernelConfig(names []string) (map[string]string, error) {
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return nil, fmt.Errorf("reading the kernel release: %w", err)
	}
	boot := "/boot/config-" + strings.TrimSpace(string(rel))
	var r io.Reader
	if f, err := os.Open(boot); err == nil {
		defer f.Close()
		r = f
	} else if f, err := os.Open("/proc/config.gz"); err == nil {
		defer f.Close()
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("/proc/config.gz: %w", err)
		}
		r = z
	} else {
		return nil, fmt.Errorf("no kernel configuration: neither %s nor /proc/config.gz can be read", boot)
	}
	return parseKernelConfig(r, names)
}

// parseKernelConfig reads the lines NAME=value of a kernel configuration
// for the given names; comments ("# CONFIG_X is not set") set nothing.
func parseKernelConfig(r io.Reader, names []string) (map[string]string, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		name, value, ok := bytes.Cut(line, []byte("="))
		if !ok || len(line) == 0 || line[0] == '#' || !want[string(name)] {
			continue
		}
		out[string(name)] = string(value)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the kernel configuration: %w", err)
	}
	return out, nil
}

// putKconfig writes value, as a kernel configuration writes it (y, m, n, a
// number, a quoted string), into dst as libbpf does for an extern of type
// typ: y/n into a bool, y/m/n into enum libbpf_tristate (1, 2, 0) or a char
// (the letter), a string into a char array (NUL-terminated, cut to fit),
// a number into an integer, char or bool it fits.
func putKconfig(dst []byte, typ btf.Type, value string) error {
	t := btf.UnderlyingType(typ)
	order := binary.NativeEndian
	if value == "y" || value == "m" || value == "n" {
		switch t := t.(type) {
		case *btf.Int:
			switch {
			case t.Encoding == btf.Bool:
				if value == "m" {
					return errors.New("m (module) for a bool: declare it enum libbpf_tristate")
				}
				dst[0] = b2u8(value == "y")
				return nil
			case t.Encoding == btf.Char || t.Size == 1:
				dst[0] = value[0]
				return nil
			}
		case *btf.Enum:
			if t.Name == "libbpf_tristate" {
				tri := map[string]uint64{"n": 0, "y": 1, "m": 2}[value]
				return putUint(dst, order, tri)
			}
		}
		return fmt.Errorf("a tristate value needs a bool, char or enum libbpf_tristate, not %s", typ)
	}
	if strings.HasPrefix(value, `"`) {
		s, err := strconv.Unquote(value)
		if err != nil {
			return fmt.Errorf("malformed string: %w", err)
		}
		a, ok := t.(*btf.Array)
		if !ok || a.Nelems == 0 {
			return fmt.Errorf("a string needs a char array, not %s", typ)
		}
		if e, ok := btf.UnderlyingType(a.Type).(*btf.Int); !ok || e.Size != 1 {
			return fmt.Errorf("a string needs a char array, not %s", typ)
		}
		n := copy(dst[:a.Nelems-1], s)
		dst[n] = 0
		return nil
	}
	n, err := strconv.ParseUint(value, 0, 64)
	if err != nil {
		if i, ierr := strconv.ParseInt(value, 0, 64); ierr == nil {
			n, err = uint64(i), nil
		} else {
			return fmt.Errorf("not a number: %w", err)
		}
	}
	it, ok := t.(*btf.Int)
	if !ok {
		return fmt.Errorf("a number needs an integer type, not %s", typ)
	}
	if it.Encoding == btf.Bool && n > 1 {
		return errors.New("more than 1 for a bool")
	}
	if it.Size < 8 && n>>(8*it.Size) != 0 && int64(n)>>(8*it.Size-1) != -1 {
		return fmt.Errorf("does not fit %d bytes", it.Size)
	}
	return putUint(dst, order, n)
}

func b2u8(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// putUint writes n into dst, whose length is the integer's size.
func putUint(dst []byte, order binary.ByteOrder, n uint64) error {
	switch len(dst) {
	case 1:
		dst[0] = byte(n)
	case 2:
		order.PutUint16(dst, uint16(n))
	case 4:
		order.PutUint32(dst, uint32(n))
	case 8:
		order.PutUint64(dst, n)
	default:
		return fmt.Errorf("an integer of %d bytes", len(dst))
	}
	return nil
}

// normalizeKconfig lets .kconfig externs that resolveKconfig leaves to
// cilium/ebpf (of a spec ParseObject did not read) be declared with
// typedef'd integers (extern __u32 LINUX_KERNEL_VERSION __kconfig;), as
// libbpf accepts: cilium/ebpf fills in LINUX_KERNEL_VERSION and
// LINUX_HAS_SYSCALL_WRAPPER only when their BTF type is a plain integer.
//
// cilium/ebpf keeps the .kconfig map spec out of CollectionSpec.Maps: the
// programs' instructions point at it, and its value is the object's
// .kconfig Datasec, shared by every copy of the spec. So the Datasec is
// changed in place: each variable whose type is a typedef of an integer is
// replaced by a new variable of the integer itself. The old variables are
// not modified, the layout is the same, and doing it twice changes
// nothing.
func normalizeKconfig(spec *ebpf.CollectionSpec) {
	if spec == nil || spec.Types == nil {
		return
	}
	var ds *btf.Datasec
	if err := spec.Types.TypeByName(".kconfig", &ds); err != nil {
		return
	}
	for i, vsi := range ds.Vars {
		v, ok := vsi.Type.(*btf.Var)
		if !ok {
			continue
		}
		if _, isTypedef := v.Type.(*btf.Typedef); !isTypedef {
			continue
		}
		if n, ok := btf.UnderlyingType(v.Type).(*btf.Int); ok {
			nv := *v
			nv.Type = n
			ds.Vars[i].Type = &nv
		}
	}
}
