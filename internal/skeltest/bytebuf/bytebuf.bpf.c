//go:build ignore

// User programs in ubpf's calling convention, u64 f(u8 *data, u64 len):
// the skeleton gives them Run([]byte).
#include "common.h"
#include "skelgen.h"

/* The sum of the buffer's 8-byte words (a tail shorter than 8 bytes is
 * added byte by byte). */
SEC("ubpf/checksum")
__u64 checksum(__u8 *data, __u64 len)
{
	__u64 sum = 0, i = 0;
	for (; i + 8 <= len && i < 1 << 20; i += 8)
		sum += *(__u64 *)(data + i);
	for (; i < len && i < 1 << 20; i++)
		sum += data[i];
	return sum;
}

/* Parses a 20-byte IPv4-like header: returns protocol << 32 | total
 * length, or -1 when the buffer is too short or the version is not 4. */
SEC("ubpf/parse")
__s64 parse(void *data, __u64 len)
{
	__u8 *p = data;
	if (len < 20 || (p[0] >> 4) != 4)
		return -1;
	__u64 total = (__u64)p[2] << 8 | p[3];
	return (__s64)((__u64)p[9] << 32 | total);
}

/* Flips every byte in place and returns how many it flipped. */
SEC("ubpf/invert")
__u64 invert(char *data, unsigned int len)
{
	unsigned int i;
	for (i = 0; i < len && i < 4096; i++)
		data[i] = ~data[i];
	return i;
}

/* A polynomial hash of the buffer, in the loop clang writes for
 * for (i = 0; i < len; i++). */
SEC("ubpf/hash")
__u64 hash(__u8 *data, __u64 len)
{
	__u64 h = 0;
	for (__u64 i = 0; i < len; i++)
		h = h * 31 + data[i];
	return h;
}

/* The sum of the first 256 words, or 0 when the buffer is shorter: a
 * constant trip count, which clang ends with jeq out and ja back. */
SEC("ubpf/sum256")
__u64 sum256(__u8 *data, __u64 len)
{
	__u64 sum = 0;
	if (len < 2048)
		return 0;
	for (int i = 0; i < 256; i++)
		sum += ((__u64 *)data)[i];
	return sum;
}

/* The sum of the buffer's 32-bit words, at most 4096 of them, folded: the
 * loop clang-19 writes for for (i = 0; i < n && i < MAX; i++) carries its
 * counter through a copy. */
SEC("ubpf/sum32")
__u64 sum32(__u8 *data, __u64 len)
{
	__u64 sum = 0, i;
	__u32 *w = (__u32 *)data;
	for (i = 0; i < len / 4 && i < 4096; i++)
		sum += w[i];
	return sum + (sum >> 32);
}

/* The index of the first zero byte, or the length (at most 4096): a loop
 * with a way out that depends on the data. */
SEC("ubpf/zero")
__u64 zero(__u8 *data, __u64 len)
{
	__u64 i;
	for (i = 0; i < len && i < 4096; i++)
		if (data[i] == 0)
			break;
	return i;
}

/* Adds 3 to each 64-bit word in place, at most 512, and returns how many:
 * a second bound tested in the middle of the loop's body. */
SEC("ubpf/bump")
__u64 bump(__u8 *data, __u64 len)
{
	__u64 i, *w = (__u64 *)data;
	for (i = 0; i < len / 8 && i < 512; i++)
		w[i] += 3;
	return i;
}

/* The number of newlines in the first 4096 bytes: clang-19 rotates this
 * loop (a jump enters its body, whose two ways back jump to the counter's
 * step and test placed before it). */
SEC("ubpf/lines")
__u64 lines(__u8 *data, __u64 len)
{
	__u64 n = 0;
	for (__u64 i = 0; i < len && i < 4096; i++) {
		if (data[i] == '\n')
			n++;
	}
	return n;
}

/* Classifies the first 4096 bytes (control, space, digit, upper, lower,
 * other) into one sum: a rotated loop whose body is an if-else chain with
 * six ways back. */
SEC("ubpf/classify")
__u64 classify(__u8 *data, __u64 len)
{
	__u64 n = 0;
	for (__u64 i = 0; i < len && i < 4096; i++) {
		__u8 c = data[i];
		if (c < 0x20)
			n += 1;
		else if (c == 0x20)
			n += 3;
		else if (c >= '0' && c <= '9')
			n += 0x100;
		else if (c >= 'A' && c <= 'Z')
			n += 0x10000;
		else if (c >= 'a' && c <= 'z')
			n += 0x1000000;
		else
			n += 5;
	}
	return n;
}

/* The sum of the buffer's big-endian 32-bit words, at most 1024 of them,
 * read byte by byte: clang-19 tests i + 4 <= len in a register that also
 * holds the bytes' address. */
SEC("ubpf/be32sum")
__u64 be32sum(__u8 *data, __u64 len)
{
	__u64 s = 0;
	for (__u64 i = 0; i + 4 <= len && i < 4096; i += 4)
		s += (__u32)data[i] << 24 | (__u32)data[i + 1] << 16 |
		     (__u32)data[i + 2] << 8 | data[i + 3];
	return s;
}

/* The sum of the first 4096 bytes, walking a pointer up while the length
 * counts down (while (len--)); the clamp makes clang jump into the loop's
 * head past it. */
SEC("ubpf/sumdown")
__u64 sumdown(__u8 *p, __u64 len)
{
	__u64 s = 0;
	if (len > 4096)
		len = 4096;
	while (len--)
		s += *p++;
	return s;
}

/* The buffer's length without its trailing spaces: an index counting down
 * that leaves at the first byte that is not a space. */
SEC("ubpf/rtrim")
__u64 rtrim(__u8 *data, __u64 n)
{
	while (n > 0 && data[n - 1] == ' ')
		n--;
	return n;
}

/* A hash of the first 4096 bytes taken from the last to the first. */
SEC("ubpf/backhash")
__u64 backhash(__u8 *data, __u64 len)
{
	__u64 s = 0;
	if (len > 4096)
		len = 4096;
	for (__u64 i = len; i-- > 0;)
		s = s * 31 + data[i];
	return s;
}
