package gen

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"time"

	"github.com/skelgen/skelgen/btfmin"
	"github.com/skelgen/skelgen/runtime/bridge"
)

// KernelBTFArchive returns the minimal BTF (btfmin.MinimalKernelBTF) of
// object for each kernel of ks whose byte order is the object's, as the
// skeleton embeds it (bridge.WithKernelBTF): a tar archive compressed with
// gzip, one entry <release>.btf per kernel in the order of ks, a kernel
// whose minimal BTF an earlier one has already a hard link to it. It
// returns the releases too. The same inputs give the same bytes.
func KernelBTFArchive(object []byte, ks []btfmin.Kernel) ([]byte, []string, error) {
	spec, err := bridge.ParseObject(object)
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, nil, err
	}
	tw := tar.NewWriter(zw)
	first := map[string]string{} // minimal BTF → the entry holding it
	var names []string
	for _, k := range ks {
		if k.ByteOrder != nil && k.ByteOrder != spec.ByteOrder {
			continue
		}
		raw, err := btfmin.MinimalKernelBTF(object, k.Spec)
		if err != nil {
			return nil, nil, fmt.Errorf("kernel %s: %w", k.Name, err)
		}
		h := &tar.Header{Name: k.Name + ".btf", Mode: 0o644, ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Size: int64(len(raw))}
		if prev, ok := first[string(raw)]; ok {
			h.Typeflag, h.Linkname, h.Size = tar.TypeLink, prev, 0
		} else {
			first[string(raw)] = h.Name
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, nil, fmt.Errorf("kernel %s: %w", k.Name, err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(raw); err != nil {
				return nil, nil, err
			}
		}
		names = append(names, k.Name)
	}
	if err := tw.Close(); err != nil {
		return nil, nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), names, nil
}

// kernelBTFFileName is the file the skeleton of target t embeds its
// kernels' minimal BTF from.
func kernelBTFFileName(stem string, t Target) string {
	return stem + "_" + t.Suffix() + "_btf.tar.gz"
}
