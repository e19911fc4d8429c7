/* skelgen.h: built-in functions for SEC("ubpf/...") programs.
 *
 * User-space programs run inside the Go process in skelgen's runtime. The
 * functions below are __ksym externs that the runtime binds itself; they are
 * not part of the skeleton's host interface. Output goes to the io.Writer
 * the host chooses when loading (standard output by default); records go to
 * the host's record callback.
 *
 * Written by `skelgen header`; regenerate it rather than editing it.
 */
#ifndef __SKELGEN_H__
#define __SKELGEN_H__

#ifndef __ksym
#define __ksym __attribute__((section(".ksyms")))
#endif

/* Prints a log2 histogram of an array map of 64-bit counters, where slot i
 * counts values in [2^i, 2^(i+1)), in the format of bcc's print_log2_hist.
 * unit labels the value column ("nsecs", "usecs", ...). */
extern void skelgen_print_log2_hist(void *map, const char *unit) __ksym;

/* Prints a linear histogram of an array map of 64-bit counters, where slot i
 * counts values in [base + i*step, base + (i+1)*step). */
extern void skelgen_print_linear_hist(void *map, unsigned long long base,
				      unsigned long long step, const char *unit) __ksym;

/* printf-style output: fmt (of fmt_size bytes, with its NUL) formats the
 * 64-bit values in args (args_size bytes), with the conversions of
 * bpf_trace_printk (%d %i %u %x %ld %lu %lx %lld %llu %llx %s %p %c %%) and
 * widths. Returns the number of bytes written or a negative errno. Use the
 * skelgen_printf macro, which builds both arrays. */
extern int skelgen_printf_array(const char *fmt, unsigned int fmt_size,
				const unsigned long long *args, unsigned int args_size) __ksym;

/* Iterates over a map, as the bpf(2) command BPF_MAP_GET_NEXT_KEY does for
 * user space: writes the key after key (NULL: the first key) to next_key and
 * returns 0, or returns -ENOENT after the last key. */
extern long skelgen_map_next_key(void *map, const void *key, void *next_key) __ksym;

/* Emits the record name = value to the host's record callback. */
extern void skelgen_emit(const char *name, long long value) __ksym;

/* Hooks and actions.
 *
 * A tool run by its skeleton's Serve method runs the programs in these
 * sections at points of its life, all on one goroutine, one at a time:
 *
 *   SEC("ubpf/begin")            once, after attach, before any record;
 *   SEC("ubpf/interval/1s")      every interval (a Go duration: 500ms, 2m);
 *   SEC("ubpf/record/events")    every record of the ring buffer or perf
 *                                event array events: int f(struct event *e,
 *                                __u64 len); 0 drops it, else Go gets it
 *                                (with the hook's writes to *e);
 *   SEC("ubpf/lost/events")      every notice of samples the kernel lost on
 *                                perf event array events: int f(struct
 *                                skelgen_lost *l);
 *   SEC("ubpf/end")              once on stop, after detach and the last
 *                                record: the final report.
 *
 * The actions below steer the tool from any of them; outside Serve they
 * return -EOPNOTSUPP. To steer kernel programs, write a map or global they
 * read (bpf_map_update_elem, or a .bss/.data variable): both sides share
 * it. */

/* The context of a ubpf/lost/<map> hook. */
struct skelgen_lost {
	unsigned long long count; /* samples lost */
	unsigned int cpu;         /* on this CPU */
	unsigned int __pad;
};

/* Stops the tool: Serve detaches, drains the readers, runs the end hook
 * and returns; a non-zero code makes its error an *ExitError with it. */
extern long skelgen_stop(int code) __ksym;

/* Attaches (detaches) the kernel program whose C name is prog, one whose
 * section names its attach point. Returns 0, or -ENOENT for a program the
 * tool does not attach (detach: one that is not attached); a kernel that
 * refuses the attach fails the hook. */
extern long skelgen_attach(const char *prog) __ksym;
extern long skelgen_detach(const char *prog) __ksym;

/* Emits size bytes at data to the Go callback of the ring buffer or perf
 * event array map, as one of its records (without its record hook), at
 * once. Returns 0, or -ENOENT when map is not a stream the tool reads;
 * only hooks may call it. */
extern long skelgen_output(void *map, const void *data, unsigned long long size) __ksym;

#define ___sg_concat(a, b) a##b
#define ___sg_apply(fn, n) ___sg_concat(fn, n)
#define ___sg_nth(_, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, N, ...) N
#define ___sg_narg(...) ___sg_nth(_, ##__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define ___sg_fill0(a, p, x...)
#define ___sg_fill1(a, p, x) a[p] = (unsigned long long)(x)
#define ___sg_fill2(a, p, x, args...) a[p] = (unsigned long long)(x); ___sg_fill1(a, p + 1, args)
#define ___sg_fill3(a, p, x, args...) a[p] = (unsigned long long)(x); ___sg_fill2(a, p + 1, args)
#define ___sg_fill4(a, p, x, args...) a[p] = (unsigned long long)(x); ___sg_fill3(a, p + 1, args)
#define ___sg_fill5(a, p, x, args...) a[p] = (unsigned long long)(x); ___sg_fill4(a, p + 1, args)
#define ___sg_fill6(a, p, x, args...) a[p] = (unsigned long long)(x); ___sg_fill5(a, p + 1, args)
#define ___sg_fill7(a, p, x, args...) a[p] = (unsigned long long)(x); ___sg_fill6(a, p + 1, args)
#define ___sg_fill8(a, p, x, args...) a[p] = (unsigned long long)(x); ___sg_fill7(a, p + 1, args)
#define ___sg_fill9(a, p, x, args...) a[p] = (unsigned long long)(x); ___sg_fill8(a, p + 1, args)
#define ___sg_fill10(a, p, x, args...) a[p] = (unsigned long long)(x); ___sg_fill9(a, p + 1, args)
#define ___sg_fill11(a, p, x, args...) a[p] = (unsigned long long)(x); ___sg_fill10(a, p + 1, args)
#define ___sg_fill12(a, p, x, args...) a[p] = (unsigned long long)(x); ___sg_fill11(a, p + 1, args)

/* skelgen_printf("x=%d name=%s\n", x, name): up to 12 arguments. */
#define skelgen_printf(fmt, args...)                                          \
	({                                                                    \
		static const char ___fmt[] = fmt;                             \
		unsigned long long ___args[___sg_narg(args) + 1];             \
		___sg_apply(___sg_fill, ___sg_narg(args))(___args, 0, ##args); \
		skelgen_printf_array(___fmt, sizeof(___fmt), ___args,         \
				     ___sg_narg(args) * sizeof(___args[0]));  \
	})

#endif /* __SKELGEN_H__ */
