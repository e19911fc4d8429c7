package btfmin

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cilium/ebpf/btf"
	"github.com/ulikunitz/xz"

	"github.com/skelgen/skelgen/runtime/bridge"
)

// Kernel is the BTF of one kernel, read from a file of a kernel directory
// (ReadKernelDir).
type Kernel struct {
	// Name is the kernel's release as uname -r prints it, taken from the
	// file name: BTFHub's "5.4.0-1010-aws.btf.tar.xz", "6.1.0-57.btf" and
	// "vmlinux-6.1.0-57" all name their kernel so.
	Name string
	Path string
	Spec *btf.Spec
	// ByteOrder is the byte order of the file's BTF.
	ByteOrder binary.ByteOrder
}

// maxKernelBTF bounds what one kernel file may decompress to: a vmlinux
// ELF with debug sections stripped is below 100 MB, its BTF below 10 MB.
const maxKernelBTF = 512 << 20

// kernelSuffixes are the file name endings ReadKernelDir reads, longest
// first.
var kernelSuffixes = []string{".btf.tar.xz", ".tar.xz", ".btf", ".elf"}

// KernelName returns the kernel release a kernel BTF file is named for.
func KernelName(path string) string {
	name := filepath.Base(path)
	for _, s := range kernelSuffixes {
		if strings.HasSuffix(name, s) {
			name = strings.TrimSuffix(name, s)
			break
		}
	}
	return strings.TrimPrefix(name, "vmlinux-")
}

// ReadKernelDir reads every kernel BTF file of dir, sorted by name: raw
// BTF (.btf, or any file starting with the BTF magic), BTFHub's archives
// (.btf.tar.xz: one file, raw BTF, in a tar archive compressed with xz)
// and vmlinux ELF files with a .BTF section. Files of other kinds (a
// README, a fetch script) are skipped; a directory with no kernel in it is
// an error, as is a file that looks like a kernel and cannot be read.
func ReadKernelDir(dir string) ([]Kernel, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Kernel
	seen := map[string]string{}
	for _, e := range entries {
		if !e.Type().IsRegular() && e.Type()&os.ModeSymlink == 0 {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := readKernelFile(path)
		if errors.Is(err, errNotKernel) {
			continue
		}
		if err != nil {
			return nil, err
		}
		spec, err := loadBTF(data)
		if err != nil {
			return nil, fmt.Errorf("kernel BTF %s: %w", path, err)
		}
		name := KernelName(path)
		if prev, ok := seen[name]; ok {
			return nil, fmt.Errorf("kernel %s: both %s and %s", name, prev, path)
		}
		seen[name] = path
		out = append(out, Kernel{Name: name, Path: path, Spec: spec, ByteOrder: dataByteOrder(data)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no kernel BTF file (.btf, .btf.tar.xz or vmlinux ELF)", dir)
	}
	slices.SortFunc(out, func(a, b Kernel) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

var errNotKernel = errors.New("not a kernel BTF file")

// ReadKernelFile returns the BTF or ELF bytes of one kernel file: an
// archive is unpacked, anything else read as it is.
func ReadKernelFile(path string) ([]byte, error) {
	data, err := readKernelFile(path)
	if errors.Is(err, errNotKernel) {
		return nil, fmt.Errorf("%s: %w (want raw BTF, a .btf.tar.xz archive or a vmlinux ELF)", path, err)
	}
	return data, err
}

func readKernelFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 6)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	switch {
	case bytes.HasPrefix(head, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return unpackKernelArchive(path, f)
	case bytes.HasPrefix(head, []byte("\x7fELF")),
		bytes.HasPrefix(head, []byte{0x9f, 0xeb}), bytes.HasPrefix(head, []byte{0xeb, 0x9f}):
		data, err := io.ReadAll(io.LimitReader(f, maxKernelBTF+1))
		if err != nil {
			return nil, err
		}
		if len(data) > maxKernelBTF {
			return nil, fmt.Errorf("%s: larger than %d MB", path, maxKernelBTF>>20)
		}
		return data, nil
	}
	return nil, errNotKernel
}

// unpackKernelArchive returns the one regular file of an xz-compressed tar
// archive (BTFHub's layout). Directories and links beside it are skipped;
// an entry of another kind, or one of them claiming data, is an error
// (bridge.ReadTarEntry).
func unpackKernelArchive(path string, r io.Reader) ([]byte, error) {
	zr, err := xz.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tr := tar.NewReader(zr)
	var out []byte
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if h.Typeflag == tar.TypeReg && out != nil {
			return nil, fmt.Errorf("%s: more than one file in the archive (%s)", path, h.Name)
		}
		data, err := bridge.ReadTarEntry(tr, h, maxKernelBTF)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if h.Typeflag == tar.TypeReg {
			out = data
		}
	}
	if out == nil {
		return nil, fmt.Errorf("%s: no file in the archive", path)
	}
	return out, nil
}

// dataByteOrder is the byte order of raw BTF or of an ELF file.
func dataByteOrder(data []byte) binary.ByteOrder {
	switch {
	case bytes.HasPrefix(data, []byte{0x9f, 0xeb}), bytes.HasPrefix(data, []byte("\x7fELF\x02\x01")):
		return binary.LittleEndian
	case bytes.HasPrefix(data, []byte{0xeb, 0x9f}), bytes.HasPrefix(data, []byte("\x7fELF\x02\x02")):
		return binary.BigEndian
	}
	return nil
}
