/* Fuzzing the command parser and protocol core: every host byte is hostile.
 *
 *   make -C firmware fuzz            N inputs from a seeded generator (random
 *                                    bytes, valid commands with random fields,
 *                                    then bit flips, cuts and splices), under
 *                                    AddressSanitizer and UBSan
 *   clang -DLIBFUZZER -fsanitize=fuzzer,address ...   the same target for libFuzzer
 *
 * Each input runs on a fresh hub with the Cortex-M build's buffer sizes. The
 * checks: no sanitizer report, the hub never writes beyond the room the link
 * offers, and everything it sends parses as good frames (no CRC error, no
 * stray byte): a malformed command is answered by a NAK or ignored, never by
 * garbage, a hang or a reset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/hub.h"

static uint8_t out[1 << 16];
static size_t outn, room_left;
static int bad_write;

static size_t f_room(void *ctx) { (void)ctx; return room_left; }
static void f_write(void *ctx, const uint8_t *b, size_t n)
{
	(void)ctx;
	if (n > room_left) {
		bad_write = 1;
		return;
	}
	room_left -= n;
	if (outn + n <= sizeof out) {
		memcpy(out + outn, b, n);
		outn += n;
	}
}
static int f_read(void *ctx, uint64_t idx, int ch, int fmt, uint16_t *bus, int32_t *cur, uint32_t *over)
{
	(void)ctx;
	uint32_t h = (uint32_t)(idx * 2654435761u) ^ (uint32_t)ch * 40503u;
	*bus = (uint16_t)h;
	*cur = fmt == IW_FMT16 ? (int16_t)(h >> 7) : (int32_t)(h << 12) >> 12;
	if ((h & 0xFFF) == 7) {
		*over = h;
		return 1;
	}
	return 0;
}

static uint8_t ring[16 << 10], sets[6 << 10], fb[2048], rxb[64];
static uint32_t zb[1024], zi[1024];

static int good_frames, answered;
static void count(void *ctx, const struct iw_frame *f)
{
	(void)ctx;
	good_frames++;
	if (f->type == IW_ACK || f->type == IW_NAK)
		answered++;
}

/* run feeds one input to a fresh hub: the input is a sequence of chunks
 * [time step byte][length byte][bytes]. Returns nonzero on a failed check. */
static int run(const uint8_t *d, size_t n, int protocol)
{
	struct iw_config c;
	memset(&c, 0, sizeof c);
	c.protocol = (uint8_t)protocol;
	c.ports = 2;
	c.rails = 2;
	c.rail[0] = (struct iw_rail){ IW_RAIL_5V, 5250, 50000, 8000000 };
	c.rail[1] = (struct iw_rail){ IW_RAIL_12V, 12600, 100000, 10000000 };
	c.nrates = 4;
	c.rates[0] = 100;
	c.rates[1] = 1000;
	c.rates[2] = 2000;
	c.rates[3] = 5000;
	c.caps = 7;
	c.bus_lsb_uv = 1250;
	c.link_bytes_sec = 1000000;
	c.model = "fuzz";
	c.firmware = "0";
	c.serial = "0";
	c.max_frame = 256;
	c.formats = 7;
	for (int i = 0; i < 4; i++)
		c.cal[i] = (struct iw_cal){ 5120, 20000, 50000, 8000000 };
	c.ring = ring;
	c.ring_bytes = sizeof ring;
	c.sets = sets;
	c.sets_cap = sizeof sets;
	c.fb = fb;
	c.fb_cap = sizeof fb;
	c.zb = zb;
	c.zi = zi;
	c.z_cap = 1024;
	c.rxbuf = rxb;
	c.rx_cap = sizeof rxb;
	struct iw_platform p = { NULL, f_read, NULL, NULL, f_room, f_write };
	struct iw_hub h;
	if (iw_hub_init(&h, &c, &p) != 0)
		return 1;
	outn = 0;
	bad_write = 0;
	uint64_t now = 0;
	size_t i = 0;
	while (i + 2 <= n) {
		now += (uint64_t)d[i] * 1000000u; /* 0-255 ms */
		room_left = (size_t)d[i + 1] * 64; /* what the link takes now: 0-16 KiB */
		size_t k = d[i + 1] % 64;
		i += 2;
		if (k > n - i)
			k = n - i;
		iw_hub_rx(&h, d + i, k, now);
		iw_hub_poll(&h, now);
		i += k;
	}
	room_left = 1 << 16;
	iw_hub_poll(&h, now + 20000000u);
	struct iw_parser ps;
	static uint8_t pb[IW_MAX_FRAME];
	iw_parser_init(&ps, pb, sizeof pb, count, NULL);
	iw_parser_feed(&ps, out, outn, 0);
	if (bad_write || ps.crc_errors || ps.discarded || ps.len) {
		fprintf(stderr, "fuzz: bad output: write beyond room %d, %u CRC errors, %u stray bytes, %zu left\n", bad_write,
			ps.crc_errors, ps.discarded, ps.len);
		return 1;
	}
	return 0;
}

#ifdef LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	if (n < 1)
		return 0;
	if (run(d + 1, n - 1, 1 + d[0] % 2))
		abort();
	return 0;
}
#else
static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 32);
}

/* a command with random but often plausible fields */
static size_t command(uint8_t *b)
{
	static const uint8_t types[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0x42, 0x80, 0x87 };
	uint8_t t = types[rnd() % sizeof types], pl[48];
	size_t n = rnd() % 14;
	for (size_t i = 0; i < sizeof pl; i++)
		pl[i] = (uint8_t)rnd();
	if (t == IW_START) {
		uint32_t rates[] = { 100, 1000, 2000, 5000, 10000, 7 };
		uint32_t r = rates[rnd() % 6];
		memcpy(pl, &r, 4);
		pl[4] = (uint8_t)(rnd() % 4);
		pl[5] = (uint8_t)(rnd() % 2);
		pl[6] = (uint8_t)(rnd() % 5);
		n = rnd() % 3 ? 8 : 6;
	} else if (t == IW_LINK) {
		pl[0] = (uint8_t)(rnd() % 4);
		n = 4;
	} else if (t == IW_RESEND) {
		uint64_t first = rnd() % 4000;
		uint32_t cnt = rnd() % 3000;
		memcpy(pl, &first, 8);
		memcpy(pl + 8, &cnt, 4);
		n = 12;
	} else if (t == IW_PING)
		n = rnd() % 40;
	uint8_t *p = iw_frame_begin(b, t, (uint8_t)rnd());
	memcpy(p, pl, n);
	return iw_frame_finish(b, n);
}

int main(int argc, char **argv)
{
	long runs = argc > 1 ? atol(argv[1]) : 100000;
	static uint8_t in[4096];
	long failed = 0, frames = 0;
	for (long r = 0; r < runs; r++) {
		size_t n = 0;
		while (n + 80 < sizeof in && rnd() % 40) {
			in[n++] = (uint8_t)(rnd() % 4 ? rnd() % 12 : rnd()); /* time step */
			size_t at = n++;
			uint8_t chunk[64];
			size_t k = rnd() % 3 ? command(chunk) : rnd() % 60;
			if (k > 63)
				k = 63;
			if (rnd() % 3 == 0)
				for (size_t j = 0; j < k; j++)
					chunk[j] = (uint8_t)rnd();
			else if (rnd() % 4 == 0 && k)
				chunk[rnd() % k] ^= (uint8_t)(1u << (rnd() % 8)); /* a bit flip */
			in[at] = (uint8_t)((rnd() % 256) & ~63u) | (uint8_t)k;
			memcpy(in + n, chunk, k);
			n += k;
		}
		good_frames = answered = 0;
		if (run(in, n, 1 + (int)(r % 2))) {
			failed++;
			if (failed < 5)
				fprintf(stderr, "fuzz: input %ld failed\n", r);
		}
		frames += good_frames;
	}
	printf("fuzz: %ld inputs, %ld frames sent by the hub, %ld failures\n", runs, frames, failed);
	return failed ? 1 : 0;
}
#endif
