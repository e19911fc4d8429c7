// A program with one USDT probe, skelgen:tick, written as sys/sdt.h writes
// it (a note in .note.stapsdt naming the probe's address, semaphore and
// arguments): the first argument in a register or an immediate, the
// second in memory. It waits for the semaphore (set by the kernel once a
// uprobe is registered with it) and for a byte on its standard input (the
// test's word that the BPF program is attached too: the semaphore is set
// before that), then fires the probe argv[1] times.
#include <stdlib.h>
#include <unistd.h>

volatile unsigned short skelgen_tick_semaphore __attribute__((section(".probes"))) = 0;

#define PROBE(x, y) __asm__ __volatile__(                                   \
	"990: nop\n"                                                           \
	".pushsection .note.stapsdt,\"?\",\"note\"\n"                          \
	".balign 4\n"                                                          \
	".4byte 992f-991f, 994f-993f, 3\n"                                     \
	"991: .asciz \"stapsdt\"\n"                                            \
	"992: .balign 4\n"                                                     \
	"993: .8byte 990b\n"                                                   \
	".8byte _.stapsdt.base\n"                                              \
	".8byte skelgen_tick_semaphore\n"                                      \
	".asciz \"skelgen\"\n"                                                 \
	".asciz \"tick\"\n"                                                    \
	".asciz \"-8@%[a] -4@%[b]\"\n"                                         \
	"994: .balign 4\n"                                                     \
	".popsection\n"                                                        \
	".ifndef _.stapsdt.base\n"                                             \
	".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n" \
	".weak _.stapsdt.base\n"                                               \
	".hidden _.stapsdt.base\n"                                             \
	"_.stapsdt.base: .space 1\n"                                           \
	".size _.stapsdt.base, 1\n"                                            \
	".popsection\n"                                                        \
	".endif\n"                                                             \
	:: [a] "nor"((long)(x)), [b] "m"(y))

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	char go;

	while (!skelgen_tick_semaphore)
		usleep(1000);
	if (read(0, &go, 1) != 1)
		return 1;

	for (long i = 1; i <= n; i++) {
		volatile int neg = -(int)i;

		while (!skelgen_tick_semaphore)
			usleep(1000);
		PROBE(i * 7, neg);
	}
	return 0;
}
