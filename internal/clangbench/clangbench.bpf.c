//go:build ignore

// Workloads as users write them, compiled by clang-19 -O2 -mcpu=v3. Each
// body is written once, over a buffer of N bytes the caller has proven it
// can read (and data_end, the buffer's end, where a body checks against
// it); it runs as a user-space program (SEC("ubpf/<name>"), ubpf's
// u64 f(u8 *data, u64 len)) and as an XDP program over a packet of the
// same bytes, which stores its result in a global for the test to read.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define N 2048

/* 32 passes of a loop adding the buffer's 8-byte words. */
static __always_inline __u64 checksum(const __u8 *data)
{
	__u64 sum = 0;
	for (int pass = 0; pass < 32; pass++)
		for (int i = 0; i < N; i += 8)
			sum += *(const __u64 *)(data + i) ^ pass;
	return sum;
}

/* The integer log2 of 1000 values made from the buffer's words: a cascade
 * of data-dependent tests. */
static __always_inline __u64 log2sum(const __u8 *data)
{
	__u64 total = 0;
	for (int i = 0; i < 1000; i++) {
		__u64 v = *(const __u64 *)(data + (i & 255) * 8) >> (i & 63), r = 0;
		if (v >> 32) { v >>= 32; r += 32; }
		if (v >> 16) { v >>= 16; r += 16; }
		if (v >> 8) { v >>= 8; r += 8; }
		if (v >> 4) { v >>= 4; r += 4; }
		if (v >> 2) { v >>= 2; r += 2; }
		if (v >> 1) { r += 1; }
		total += r;
	}
	return total;
}

/* A byte-code dispatch: a switch on each byte's low bits. */
static __always_inline __u64 dispatch(const __u8 *data)
{
	__u64 acc = 1;
	for (int i = 0; i < N; i++) {
		__u8 c = data[i];
		switch (c & 7) {
		case 0: acc += c; break;
		case 1: acc ^= acc << 7; break;
		case 2: acc -= c * 3; break;
		case 3: acc = acc * 33 + c; break;
		case 4: acc ^= acc >> 9; break;
		case 5: acc += acc >> 3; break;
		case 6: acc = ~acc + c; break;
		default: acc |= c; break;
		}
	}
	return acc;
}

/* The number of primes below 1500 + the buffer's first byte, by trial
 * division. */
static __always_inline __u64 primes(const __u8 *data)
{
	__u32 limit = 1500 + data[0], count = 0;
	for (__u32 n = 2; n < limit && n < 2000; n++) {
		__u32 prime = 1;
		for (__u32 d = 2; d * d <= n && d < 64; d++) {
			if (n % d == 0) {
				prime = 0;
				break;
			}
		}
		count += prime;
	}
	return count;
}

/* FNV-1a over the buffer. */
static __always_inline __u64 fnv1a(const __u8 *data)
{
	__u64 h = 0xcbf29ce484222325ULL;
	for (int i = 0; i < N; i++) {
		h ^= data[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The number of words (runs of non-space bytes) in the buffer. */
static __always_inline __u64 words(const __u8 *data)
{
	__u64 n = 0;
	int in = 0;
	for (int i = 0; i < N; i++) {
		__u8 c = data[i];
		int space = c == ' ' || c == '\n' || c == '\t';
		n += !space && !in;
		in = !space;
	}
	return n;
}

/* A byte-code dispatch of 32 cases over the buffer's first half: clang
 * writes the switch as a tree of jumps on the byte's low five bits, whose
 * cases jump back into the loop's tail. (Over all N bytes the kernel's
 * verifier gives up: more than 8192 branches pending.) */
static __always_inline __u64 switch32(const __u8 *data)
{
	__u64 acc = 1;
	for (int i = 0; i < N / 2; i++) {
		__u8 c = data[i];
		switch (c & 31) {
		case 0: acc += c; break;
		case 1: acc ^= acc << 7; break;
		case 2: acc -= c * 3; break;
		case 3: acc = acc * 33 + c; break;
		case 4: acc ^= acc >> 9; break;
		case 5: acc += acc >> 3; break;
		case 6: acc = ~acc + c; break;
		case 7: acc |= c; break;
		case 8: acc += 0x9e37; break;
		case 9: acc ^= c << 3; break;
		case 10: acc -= acc >> 5; break;
		case 11: acc = acc * 5 + 1; break;
		case 12: acc ^= acc << 13; break;
		case 13: acc += c * c; break;
		case 14: acc = (acc << 1) | (acc >> 63); break;
		case 15: acc &= ~(__u64)c; break;
		case 16: acc += acc << 2; break;
		case 17: acc ^= 0x5bd1e995; break;
		case 18: acc -= c; break;
		case 19: acc = acc * 7 - c; break;
		case 20: acc ^= acc >> 17; break;
		case 21: acc += 12345; break;
		case 22: acc = ~acc; break;
		case 23: acc |= (__u64)c << 8; break;
		case 24: acc += acc >> 11; break;
		case 25: acc ^= c * 0x45d9f3b; break;
		case 26: acc -= 77; break;
		case 27: acc = acc * 3 + c; break;
		case 28: acc ^= acc << 21; break;
		case 29: acc += c << 4; break;
		case 30: acc = (acc >> 1) | (acc << 63); break;
		default: acc ^= c; break;
		}
	}
	return acc;
}
/* An if-else chain of ten ranges of each byte. */
static __always_inline __u64 ifelse(const __u8 *data)
{
	__u64 acc = 1;
	for (int i = 0; i < N; i++) {
		__u8 c = data[i];
		if (c < 16) acc += c;
		else if (c < 40) acc ^= acc << 7;
		else if (c < 64) acc -= c * 3;
		else if (c < 90) acc = acc * 33 + c;
		else if (c < 120) acc ^= acc >> 9;
		else if (c < 150) acc += acc >> 3;
		else if (c < 180) acc = ~acc + c;
		else if (c < 210) acc |= c;
		else if (c < 240) acc -= acc >> 5;
		else acc ^= c;
	}
	return acc;
}
/* A byte-code interpreter: an instruction is an opcode byte, whose low
 * five bits pick one of 32 operations, and up to two operand bytes. It
 * starts at the offset the buffer's first byte holds and runs until its
 * instructions have taken 1024 bytes (its fuel), the program counter
 * wrapping around the buffer's first 1024 bytes; opcode 31 jumps to its
 * operand. Neither the program counter nor the fuel steps by a constant,
 * and it checks each instruction against the buffer's end, as the kernel's
 * verifier asks of an index it cannot bound. */
static __always_inline __u64 bytecode(const __u8 *data, const __u8 *end)
{
	__u64 acc = 1;
	__u32 pc = data[0];
	for (int fuel = 1024; fuel > 0;) {
		const __u8 *in = data + pc;
		__u32 len = 1;
		if (in + 3 > end)
			break;
		switch (in[0] & 31) {
		case 0: acc += in[1]; len = 2; break;
		case 1: acc ^= acc << 7; break;
		case 2: acc -= in[1] * 3; len = 2; break;
		case 3: acc = acc * 33 + in[1]; len = 2; break;
		case 4: acc ^= acc >> 9; break;
		case 5: acc += acc >> 3; break;
		case 6: acc = ~acc + in[1]; len = 2; break;
		case 7: acc |= in[1]; len = 2; break;
		case 8: acc += in[1] | in[2] << 8; len = 3; break;
		case 9: acc ^= in[1] << 3; len = 2; break;
		case 10: acc -= acc >> 5; break;
		case 11: acc = acc * 5 + 1; break;
		case 12: acc ^= acc << 13; break;
		case 13: acc += in[1] * in[2]; len = 3; break;
		case 14: acc = (acc << 1) | (acc >> 63); break;
		case 15: acc &= ~(__u64)in[1]; len = 2; break;
		case 16: acc += acc << 2; break;
		case 17: acc ^= 0x5bd1e995; break;
		case 18: acc -= in[1]; len = 2; break;
		case 19: acc = acc * 7 - in[1]; len = 2; break;
		case 20: acc ^= acc >> 17; break;
		case 21: acc += 12345; break;
		case 22: acc = ~acc; break;
		case 23: acc |= (__u64)in[1] << 8; len = 2; break;
		case 24: acc += acc >> 11; break;
		case 25: acc ^= in[1] * 0x45d9f3b; len = 2; break;
		case 26: acc -= 77; break;
		case 27: acc = acc * 3 + in[2]; len = 3; break;
		case 28: acc ^= acc << 21; break;
		case 29: acc += in[1] << 4; len = 2; break;
		case 30: acc = (acc >> 1) | (acc << 63); break;
		default: /* jump */
			pc = in[1];
			fuel -= 2;
			continue;
		}
		pc = (pc + len) & 1023;
		fuel -= len;
	}
	return acc;
}
/* Counts the buffer's bytes in a hash map keyed by byte, one lookup and
 * one update or insert per byte, and returns the count of the last byte's
 * value. Each side has its own map. */
struct counts {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
};
struct counts user_counts SEC(".maps");
struct counts kernel_counts SEC(".maps");

static __always_inline __u64 count(void *map, const __u8 *data)
{
	__u64 *v = 0;
	for (int i = 0; i < 512; i++) {
		__u32 key = data[i];
		v = bpf_map_lookup_elem(map, &key);
		if (v) {
			__sync_fetch_and_add(v, 1);
		} else {
			__u64 one = 1;
			bpf_map_update_elem(map, &key, &one, BPF_ANY);
		}
	}
	return v ? *v : 0;
}

__u64 result SEC(".bss");

#define WORKLOAD(name, call)                                                   \
	SEC("ubpf/" #name)                                                     \
	__u64 name##_user(__u8 *data, __u64 len)                               \
	{                                                                      \
		__u8 *data_end = data + len;                                   \
		if (len < N)                                                   \
			return 0;                                              \
		return call;                                                   \
	}                                                                      \
	SEC("xdp")                                                             \
	int name##_xdp(struct xdp_md *ctx)                                     \
	{                                                                      \
		__u8 *data = (void *)(long)ctx->data;                          \
		__u8 *data_end = (void *)(long)ctx->data_end;                  \
		if (data + N > data_end)                                       \
			return XDP_ABORTED;                                    \
		result = call;                                                 \
		return XDP_PASS;                                               \
	}

WORKLOAD(checksum, checksum(data))
WORKLOAD(log2sum, log2sum(data))
WORKLOAD(dispatch, dispatch(data))
WORKLOAD(primes, primes(data))
WORKLOAD(fnv1a, fnv1a(data))
WORKLOAD(words, words(data))
WORKLOAD(switch32, switch32(data))
WORKLOAD(ifelse, ifelse(data))
WORKLOAD(bytecode, bytecode(data, data_end))

SEC("ubpf/count")
__u64 count_user(__u8 *data, __u64 len)
{
	if (len < N)
		return 0;
	return count(&user_counts, data);
}

SEC("xdp")
int count_xdp(struct xdp_md *ctx)
{
	__u8 *data = (void *)(long)ctx->data;
	__u8 *data_end = (void *)(long)ctx->data_end;
	if (data + N > data_end)
		return XDP_ABORTED;
	result = count(&kernel_counts, data);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
