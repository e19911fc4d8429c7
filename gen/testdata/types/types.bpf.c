// Types exercised by gen's type generator tests. Every type is reached from a
// map or a global so that BTF keeps it; bitfield globals in .data carry the
// compiler's own layout, which the tests compare with the generated setters.
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

enum color { COLOR_RED, COLOR_GREEN = 2, COLOR_BLUE = 4 };
enum sign { SIGN_NEG = -5, SIGN_POS = 7 };
enum big { BIG_SMALL = 1, BIG_HUGE = 0x100000000ULL };
enum __attribute__((packed)) tiny { TINY_A = 1, TINY_B = 200 };
enum __attribute__((packed)) half { HALF_A = 1, HALF_B = 1000 };
enum __attribute__((packed)) neg8 { NEG8_MIN = -128, NEG8_MAX = 127 };
enum sbig { SBIG_NEG = -0x10000000000LL, SBIG_POS = 1 };

typedef __u32 my_id_t;
typedef my_id_t id2_t;
typedef struct { int x; int y; } point_t;

struct task_struct;

// Holes and trailing padding that Go must reproduce with explicit padding.
struct holes {
	__u8 a;
	__u64 b;
	__u16 c;
};

// A packed struct: b sits at offset 1, which Go cannot align a uint64 to.
struct __attribute__((packed)) packed {
	__u8 a;
	__u64 b;
	__u32 c;
};

// A u64 at offset 4 in a 12-byte struct.
struct __attribute__((packed, aligned(4))) u64at4 {
	__u32 a;
	__u64 b;
};

struct bits {
	__u32 flags : 3;
	__s32 delta : 5;
	__u32 mid : 20;
	__u8 kind;
	__u64 big : 40;
	enum color col : 3;
	_Bool on : 1;
	__s64 wide : 17;
	__u16 tail;
};

struct __attribute__((packed)) packed_bits {
	__u8 a : 4;
	__u16 b : 9;
	__u32 c : 19;
	__u8 d;
};

union value {
	__u32 word;
	__u64 quad;
	__u8 bytes[8];
	struct {
		__u16 lo : 4;
		__u16 hi : 12;
	};
};

// Bitfields directly in a union, read from the union's own bytes.
union ubits {
	__u32 all;
	__u32 low3 : 3;
	__s32 top : 4;
};

struct event {
	__u32 kind;
	union {
		__u32 pid;
		__u64 addr;
		struct {
			__u16 sport;
			__u16 dport;
		};
	};
	char comm[16];
	__u16 grid[4][8];
	void *ptr;
	struct task_struct *task;
	int (*fn)(int);
	const char *name;
	float f;
	double d;
	__int128 i128;
	unsigned __int128 u128;
	const volatile __u32 cv;
	_Bool b;
	id2_t id;
	point_t pt;
	struct {
		int a;
		long b;
	} inner;
	enum color col;
	enum sign sgn;
	enum big bg;
	enum tiny tn;
	enum half hf;
	enum neg8 n8;
	union value val;
	union ubits ub;
	enum sbig sb;
	struct holes holes[2];
	struct packed pk;
	struct u64at4 at4;
	int type;
	int func;
	int foo_bar;
	int fooBar;
	signed char sc;
	unsigned char uc;
	long long ll;
};

struct flex {
	__u32 n;
	__u32 items[];
};

struct key {
	__u32 pid;
	__u16 port;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, struct key);
	__type(value, struct event);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct {
		__u64 packets;
		__u32 bytes : 24;
		__u32 proto : 8;
	});
} counts SEC(".maps");

// Round-trip oracles: only bitfields are set, so the bytes do not depend on
// how the (native-order) plain fields are stored.
struct bits bits_rt = {
	.flags = 5,
	.delta = -7,
	.mid = 0xabcde,
	.big = 0x12345678abULL,
	.col = COLOR_BLUE,
	.on = 1,
	.wide = -1234,
};
struct packed_bits packed_bits_rt = { .a = 9, .b = 0x1a5, .c = 0x5a5a5 };
union value value_rt = { .lo = 0xa, .hi = 0x123 };
union ubits ubits_rt = { .low3 = 5 };

struct flex flex_g;
struct event event_g;
point_t point_g;

SEC("tracepoint/syscalls/sys_enter_getpid")
int touch(void *ctx)
{
	struct key k = {};
	struct event *e = bpf_map_lookup_elem(&events, &k);
	if (e)
		e->kind = bits_rt.flags + packed_bits_rt.a + value_rt.lo + flex_g.n + point_g.x;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
