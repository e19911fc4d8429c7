// libbpf's consumer for make bench: drains want records of the pinned
// ring buffer argv[1] with ring_buffer__consume and a C callback, and
// prints the nanoseconds it took, the records and the sum of their val.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct rec {
	unsigned long long seq, val;
};

static unsigned long long seen, sum;

static int on_record(void *ctx, void *data, size_t len)
{
	const struct rec *r = data;
	seen++;
	sum += r->val;
	return 0;
}

static unsigned long long now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: consume PINNED-RINGBUF RECORDS\n");
		return 2;
	}
	unsigned long long want = strtoull(argv[2], NULL, 10);
	int fd = bpf_obj_get(argv[1]);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	struct ring_buffer *rb = ring_buffer__new(fd, on_record, NULL, NULL);
	if (!rb) {
		perror("ring_buffer__new");
		return 1;
	}
	unsigned long long t0 = now();
	while (seen < want) {
		int n = ring_buffer__consume(rb);
		if (n < 0) {
			fprintf(stderr, "ring_buffer__consume: %d\n", n);
			return 1;
		}
		if (n == 0 && ring_buffer__poll(rb, 1000) == 0) {
			fprintf(stderr, "no record for a second after %llu of %llu\n", seen, want);
			return 1;
		}
	}
	unsigned long long t1 = now();
	printf("%llu %llu %llu\n", t1 - t0, seen, sum);
	ring_buffer__free(rb);
	return 0;
}
