#!/bin/sh
# Fetches the BTF of Debian 12's newest 6.1 and 6.12 cloud kernels into
# this directory (about 4 MB each, not committed), for the kernel matrix
# tests (skelgen check -kernels, -btf-for):
#
#   1. apt-get download linux-image-<release>-cloud-amd64-unsigned
#      (the newest of each series apt-cache knows; run apt-get update first)
#   2. take boot/vmlinuz-<release> out of the .deb (dpkg-deb)
#   3. the vmlinuz is a bzImage: its setup header says where the compressed
#      kernel starts (setup_sects at 0x1f1, payload_offset at 0x248,
#      payload_length at 0x24c; the payload starts at
#      (setup_sects+1)*512 + payload_offset and ends with 4 bytes of
#      decompressed size); decompress it (lz4 legacy, xz, zstd or gzip, by
#      its magic) into the vmlinux ELF
#   4. keep the ELF's .BTF section (llvm-objcopy) as <release>.btf
#
# Needs apt-get, dpkg-deb, python3, lz4/xz/zstd/gzip and llvm-objcopy-19.
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
OBJCOPY=${OBJCOPY:-llvm-objcopy-19}

for series in '6\.1\.0-[0-9]*' '6\.12\.[0-9]*\+deb[0-9]*'; do
	pkg=$(apt-cache search --names-only "^linux-image-${series}-cloud-amd64-unsigned\$" |
		awk '{print $1}' | sort -V | tail -1)
	[ -n "$pkg" ] || { echo "fetch.sh: no package for linux-image-${series}-cloud-amd64-unsigned (apt-get update?)" >&2; exit 1; }
	release=${pkg#linux-image-}
	release=${release%-unsigned}
	if [ -s "$dir/$release.btf" ]; then
		echo "$release.btf: present"
		continue
	fi
	(cd "$work" && apt-get download -q "$pkg" >/dev/null 2>&1) ||
		(cd "$work" && apt-get download "$pkg")
	deb=$(ls "$work"/"$pkg"_*.deb)
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" "./boot/vmlinuz-$release"
	python3 - "$work/boot/vmlinuz-$release" "$work/payload" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
if d[0x202:0x206] != b'HdrS':
    sys.exit('%s: not a bzImage (no HdrS)' % sys.argv[1])
setup_sects = d[0x1f1] or 4
offset, length = struct.unpack('<II', d[0x248:0x250])
start = (setup_sects + 1) * 512 + offset
# The last 4 bytes are the decompressed size, not part of the stream.
open(sys.argv[2], 'wb').write(d[start:start + length - 4])
PY
	magic=$(head -c 4 "$work/payload" | od -An -tx1 | tr -d ' \n')
	case $magic in
	02214c18) lz4 -dc "$work/payload" >"$work/vmlinux" ;;
	fd377a58) xz -dc "$work/payload" >"$work/vmlinux" ;;
	28b52ffd) zstd -dc "$work/payload" >"$work/vmlinux" ;;
	1f8b*) gzip -dc "$work/payload" >"$work/vmlinux" ;;
	*) echo "fetch.sh: $pkg: unknown compression (magic $magic)" >&2; exit 1 ;;
	esac
	"$OBJCOPY" -O binary --only-section=.BTF "$work/vmlinux" "$work/$release.btf"
	[ -s "$work/$release.btf" ] || { echo "fetch.sh: $pkg: no .BTF section" >&2; exit 1; }
	mv "$work/$release.btf" "$dir/$release.btf"
	rm -f "$work"/*.deb "$work/vmlinux" "$work/payload"
	echo "$release.btf: $(wc -c <"$dir/$release.btf") bytes from $pkg"
done
