package bridge

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
)

var (
	// runningKernelBTF is where a kernel built with CONFIG_DEBUG_INFO_BTF
	// publishes its own BTF, which cilium/ebpf relocates against by
	// default.
	runningKernelBTF = "/sys/kernel/btf/vmlinux"
	// kernelReleaseFile holds the running kernel's release, as uname -r
	// prints it.
	kernelReleaseFile = "/proc/sys/kernel/osrelease"
	// kernelBTFElsewhere reports whether cilium/ebpf finds the running
	// kernel's BTF somewhere (it also looks for a vmlinux under /boot).
	kernelBTFElsewhere = func() bool {
		_, err := btf.LoadKernelSpec()
		return err == nil
	}
)

// maxEmbeddedBTF bounds one kernel's minimal BTF in an archive: minimal
// BTF is kilobytes, a whole kernel's below 10 MB.
const maxEmbeddedBTF = 64 << 20

// WithKernelBTF returns a copy of opts (which may be nil) whose load
// chooses among the kernels of archive when the running kernel has no BTF
// of its own: a generated skeleton passes the minimal kernel BTF it
// carries (skelgen -btf-for). archive is a gzip-compressed tar archive
// with one entry <release>.btf of raw BTF per kernel, kernels with the same
// minimal BTF stored once and hard-linked.
func WithKernelBTF[H any](opts *Options[H], archive []byte) *Options[H] {
	var o Options[H]
	if opts != nil {
		o = *opts
	}
	o.embedded = func(release, what string, running bool) (*btf.Spec, error) {
		return embeddedSpec(archive, release, what, running)
	}
	return &o
}

// KernelBTFReleases returns the kernel releases of an archive of minimal
// kernel BTF (see WithKernelBTF), in archive order.
func KernelBTFReleases(archive []byte) ([]string, error) {
	_, names, err := embeddedKernel(archive, "")
	return names, err
}

// kernelTypes returns the kernel BTF the kernel programs of k are
// relocated against (nil: cilium/ebpf's default, the running kernel's
// BTF): the options' own KernelTypes, else the file KernelBTF, else the
// embedded kernel named Kernel; else, for a skeleton carrying kernel BTF
// whose programs have CO-RE relocations, nothing when the running kernel
// has BTF of its own, else the embedded BTF of the running kernel's
// release, else an error naming the release and the kernels carried; a
// skeleton carrying none gets an error naming -btf-for where cilium/ebpf
// would find no BTF either.
func kernelTypes(k *ebpf.CollectionSpec, o *LoadOptions) (*btf.Spec, error) {
	given := o.Collection.Programs.KernelTypes
	switch {
	case given != nil && (o.KernelBTF != "" || o.Kernel != ""):
		return nil, errors.New("options set both Collection.Programs.KernelTypes and KernelBTF or Kernel")
	case o.KernelBTF != "" && o.Kernel != "":
		return nil, fmt.Errorf("options set both KernelBTF (%s) and Kernel (%s)", o.KernelBTF, o.Kernel)
	case given != nil:
		return given, nil
	case o.KernelBTF != "":
		spec, err := btf.LoadSpec(o.KernelBTF)
		if err != nil {
			return nil, fmt.Errorf("KernelBTF: %w", err)
		}
		return spec, nil
	case o.Kernel != "":
		if o.embedded == nil {
			return nil, fmt.Errorf("Options.Kernel %s: the object carries no kernel BTF (generate it with skelgen -btf-for)", o.Kernel)
		}
		return o.embedded(o.Kernel, "Kernel "+o.Kernel, false)
	}
	if !hasCORERelocations(k) {
		return nil, nil
	}
	if _, err := os.Stat(runningKernelBTF); err == nil {
		return nil, nil
	}
	release, err := kernelRelease()
	if err != nil {
		// Not Linux, or no /proc: cilium/ebpf says what it lacks.
		return nil, nil
	}
	if o.embedded == nil {
		if kernelBTFElsewhere() {
			return nil, nil
		}
		return nil, fmt.Errorf("running kernel %s has no BTF (%s), which the programs' CO-RE relocations need: generate the skeleton with skelgen -btf-for DIR to carry the BTF of the kernels it runs on, or load with Options.KernelBTF (a BTF file)", release, runningKernelBTF)
	}
	return o.embedded(release, "running kernel "+release, true)
}

// embeddedSpec returns the BTF of release from archive; what names the
// kernel in errors. When the archive has none for it and running is
// set, cilium/ebpf's default stands if it finds the kernel's BTF
// elsewhere (a vmlinux under /boot).
func embeddedSpec(archive []byte, release, what string, running bool) (*btf.Spec, error) {
	raw, names, err := embeddedKernel(archive, release)
	if err != nil {
		return nil, fmt.Errorf("embedded kernel BTF: %w", err)
	}
	if raw == nil {
		if running {
			if kernelBTFElsewhere() {
				return nil, nil
			}
			return nil, fmt.Errorf("%s has no BTF (%s) and the object carries none for it, only for %s: load with Options.KernelBTF (a BTF file) or Options.Kernel (one of those)",
				what, runningKernelBTF, carried(names))
		}
		return nil, fmt.Errorf("%s: the object carries no BTF for it, only for %s", what, carried(names))
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: embedded BTF: %w", what, err)
	}
	return spec, nil
}

// carried lists the releases of an archive for an error.
func carried(names []string) string {
	if len(names) == 0 {
		return "no kernel"
	}
	return strings.Join(names, ", ")
}

// embeddedKernel returns the BTF of release from archive (nil when the
// archive has none for it, or release is empty) and the releases it holds.
func embeddedKernel(archive []byte, release string) ([]byte, []string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, nil, fmt.Errorf("not a gzip-compressed tar archive: %w", err)
	}
	tr := tar.NewReader(zr)
	data := map[string][]byte{}
	var names []string
	var found []byte
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		name, ok := strings.CutSuffix(h.Name, ".btf")
		if !ok || name == "" || strings.Contains(name, "/") {
			return nil, nil, fmt.Errorf("entry %q: want <release>.btf", h.Name)
		}
		b, err := ReadTarEntry(tr, h, maxEmbeddedBTF)
		switch {
		case err != nil:
			return nil, nil, err
		case h.Typeflag == tar.TypeLink:
			if b, ok = data[strings.TrimSuffix(h.Linkname, ".btf")]; !ok {
				return nil, nil, fmt.Errorf("entry %s: links to %q, not an earlier entry", h.Name, h.Linkname)
			}
		case h.Typeflag != tar.TypeReg:
			return nil, nil, fmt.Errorf("entry %s: type %q, want a file or a hard link", h.Name, h.Typeflag)
		}
		data[name] = b
		names = append(names, name)
		if name == release {
			found = b
		}
	}
	return found, names, nil
}

// ReadTarEntry returns the contents of h, the entry tr.Next just returned:
// a regular file's bytes, at most max of them, or nil for an entry that
// has none (a hard or symbolic link, a directory, a device, a FIFO, a PAX
// global header). It decides from the header alone, before reading any
// data: a regular file larger than max, an entry of those kinds that
// claims data and an entry of any other kind are errors naming the entry.
// tar.Reader.Next skips an entry's data by reading it, which from a
// compressed archive means decompressing it, so an entry is refused
// rather than skipped whenever that could cost more than its header.
func ReadTarEntry(tr *tar.Reader, h *tar.Header, max int64) ([]byte, error) {
	switch h.Typeflag {
	case tar.TypeReg:
		if h.Size > max {
			return nil, fmt.Errorf("entry %s: %d bytes, more than %d", h.Name, h.Size, max)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("entry %s: %w", h.Name, err)
		}
		return b, nil
	case tar.TypeLink, tar.TypeSymlink, tar.TypeDir, tar.TypeChar, tar.TypeBlock, tar.TypeFifo, tar.TypeXGlobalHeader:
		if h.Size != 0 {
			return nil, fmt.Errorf("entry %s: type %q claims %d bytes of data, which only a regular file has: a malformed archive", h.Name, h.Typeflag, h.Size)
		}
		return nil, nil
	}
	return nil, fmt.Errorf("entry %s: type %q, not a regular file, link, directory or device", h.Name, h.Typeflag)
}

// hasCORERelocations reports whether a program of k has a CO-RE
// relocation, which needs kernel BTF.
func hasCORERelocations(k *ebpf.CollectionSpec) bool {
	for _, p := range k.Programs {
		for i := range p.Instructions {
			if btf.CORERelocationMetadata(&p.Instructions[i]) != nil {
				return true
			}
		}
	}
	return false
}

// kernelRelease returns the running kernel's release (uname -r).
func kernelRelease() (string, error) {
	b, err := os.ReadFile(kernelReleaseFile)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
