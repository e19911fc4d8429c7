// A program with a USDT probe written with systemtap's sys/sdt.h:
// skelgen:tick fires argv[1] times with (i, -i, i * 1000), 20 ms apart.
#include <stdlib.h>
#include <sys/sdt.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;

	for (long i = 1; i <= n; i++) {
		int neg = -(int)i;
		long long big = i * 1000;

		DTRACE_PROBE3(skelgen, tick, i, neg, big);
		usleep(20000);
	}
	return 0;
}
