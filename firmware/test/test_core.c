/* Unit tests of the firmware core: make -C firmware test. Every frame the
 * protocol document shows as a fixture (fixtures/hub/NAME.hex) is checked
 * byte for byte where the core can produce it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/crc16.h"
#include "../core/hub.h"
#include "../core/pack.h"
#include "../hal/ina228.h"

static int failures, checks;
static const char *fixdir;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		checks++;                                                    \
		if (!(cond)) {                                               \
			failures++;                                          \
			fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
		}                                                            \
	} while (0)

/* fixture reads fixtures/hub/NAME.hex: hexdump lines "OFFSET  b b b ...". */
static size_t fixture(const char *name, uint8_t *out, size_t cap)
{
	char path[512], line[512];
	snprintf(path, sizeof path, "%s/%s.hex", fixdir, name);
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(2);
	}
	size_t n = 0;
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		char *p = line;
		strtoul(p, &p, 16); /* the offset */
		for (;;) {
			char *e;
			unsigned long v = strtoul(p, &e, 16);
			if (e == p || n >= cap)
				break;
			out[n++] = (uint8_t)v;
			p = e;
		}
	}
	fclose(f);
	return n;
}

/* A hub whose output goes to a buffer. */
static uint8_t out[1 << 16];
static size_t outn;
static size_t t_room(void *ctx) { (void)ctx; return sizeof out - outn; }
static void t_write(void *ctx, const uint8_t *b, size_t n) { (void)ctx; memcpy(out + outn, b, n); outn += n; }
static int t_read(void *ctx, uint64_t idx, int ch, int fmt, uint16_t *bus, int32_t *cur, uint32_t *over)
{
	(void)ctx;
	(void)fmt;
	(void)over;
	*bus = (uint16_t)(4000 + ch);
	*cur = (int32_t)(idx * 3 + (uint64_t)ch) % 1000 - 500;
	return 0;
}

static uint8_t ring[1 << 18], sets[1 << 16], fb[IW_MAX_FRAME], rxb[IW_MAX_FRAME];
static uint32_t zb[1 << 14], zi[1 << 14];

static void v1_config(struct iw_config *c)
{
	memset(c, 0, sizeof *c);
	c->protocol = 1;
	c->ports = 2;
	c->rails = 2;
	c->rail[0] = (struct iw_rail){ IW_RAIL_5V, 6000, 50000, 8000000 };
	c->rail[1] = (struct iw_rail){ IW_RAIL_12V, 15000, 100000, 10000000 };
	c->nrates = 5;
	uint32_t r[] = { 100, 1000, 2000, 5000, 10000 };
	memcpy(c->rates, r, sizeof r);
	c->caps = 7;
	c->bus_lsb_uv = 1250;
	c->link_bytes_sec = 1000000;
	c->model = "HUB-2";
	c->firmware = "1.0.0";
	c->serial = "A1B2C3";
	c->max_frame = 4096;
	c->formats = 3;
	c->cal[0] = (struct iw_cal){ 5120, 20000, 50000, 8000000 };
	c->cal[1] = (struct iw_cal){ 5120, 10000, 100000, 10000000 };
	c->cal[2] = (struct iw_cal){ 5107, 20000, 50125, 7980000 };
	c->cal[3] = (struct iw_cal){ 5120, 10000, 100000, 10000000 };
	c->ring = ring;
	c->ring_bytes = 256 << 10;
	c->sets = sets;
	c->sets_cap = sizeof sets;
	c->fb = fb;
	c->fb_cap = sizeof fb;
	c->zb = zb;
	c->zi = zi;
	c->z_cap = sizeof zb / sizeof zb[0];
	c->rxbuf = rxb;
	c->rx_cap = sizeof rxb;
}

static struct iw_hub hub;
static const struct iw_platform plat = { NULL, t_read, NULL, NULL, t_room, t_write };

static void open_hub(struct iw_config *c)
{
	outn = 0;
	CHECK(iw_hub_init(&hub, c, &plat) == 0, "init");
}

/* exchange feeds fixture cmd and checks the answer is fixture want. */
static void exchange(const char *cmd, const char *want, uint64_t now)
{
	uint8_t in[4096], w[4096];
	size_t n = fixture(cmd, in, sizeof in), m = fixture(want, w, sizeof w);
	outn = 0;
	iw_hub_rx(&hub, in, n, now);
	CHECK(outn == m && memcmp(out, w, m) == 0, "%s -> %s: got %zu bytes, want %zu", cmd, want, outn, m);
}

static void send(uint8_t type, uint8_t seq, const uint8_t *p, size_t n, uint64_t now)
{
	uint8_t f[64];
	memcpy(iw_frame_begin(f, type, seq), p, n);
	iw_hub_rx(&hub, f, iw_frame_finish(f, n), now);
}

/* expect_nak sends a command and checks the answer is NAK reason. */
static void expect_nak(uint8_t type, const uint8_t *p, size_t n, uint8_t reason, const char *what)
{
	outn = 0;
	send(type, 9, p, n, 0);
	CHECK(outn == 10 && out[2] == IW_NAK && out[3] == 9 && out[6] == type && out[7] == reason,
	      "%s: want NAK %u, got %zu bytes type %02x reason %u", what, reason, outn, outn > 2 ? out[2] : 0, outn > 7 ? out[7] : 0);
}

static void test_crc(void)
{
	CHECK(iw_crc16(IW_CRC16_INIT, (const uint8_t *)"123456789", 9) == 0x29B1, "check value");
}

static void test_fixtures_v1(void)
{
	struct iw_config c;
	v1_config(&c);
	open_hub(&c);
	exchange("identify", "identity", 0);
	exchange("read_cal", "calibration", 0);
	exchange("start", "ack_start", 0);
	exchange("ping", "ack_ping", 0);
	exchange("stop", "ack_stop", 0);
}

static void test_fixtures_v2(void)
{
	struct iw_config c;
	v1_config(&c);
	c.protocol = 2;
	c.firmware = "2.0.0";
	open_hub(&c);
	exchange("identify", "identity_v2", 0);
	exchange("link", "ack_link", 0);
	uint8_t rc[8];
	memcpy(iw_frame_begin(rc, IW_READ_CAL, 4), "", 0);
	outn = 0;
	iw_hub_rx(&hub, rc, iw_frame_finish(rc, 0), 0);
	uint8_t w[512];
	size_t m = fixture("calibration_v2", w, sizeof w);
	CHECK(outn == m && memcmp(out, w, m) == 0, "READ_CAL v2 -> calibration_v2");
	exchange("start_v2", "ack_start_v2", 0);
}

static void test_packed_fixture(void)
{
	/* samples2_packed.hex: samples 1000-1003 of port 1, packed. */
	int32_t bus0[4] = { 4000, 4001, 3999, 4000 }, cur0[4] = { 30, 32, 29, 31 };
	uint8_t s[4 * 10];
	for (int k = 0; k < 4; k++) {
		uint8_t *q = s + k * 10;
		q[0] = (uint8_t)bus0[k];
		q[1] = (uint8_t)(bus0[k] >> 8);
		q[2] = (uint8_t)cur0[k];
		q[3] = 0;
		q[4] = 0;
		q[5] = 0x80; /* 9600 */
		q[6] = 0x25;
		q[7] = q[8] = q[9] = 0;
	}
	uint8_t buf[256], w[256];
	int used;
	size_t n = iw_pack(buf, 1000, 0x0003, 0, s, 4, 4088, zb, zi, &used);
	size_t m = fixture("samples2_packed", w, sizeof w);
	CHECK(used == 4 && n == m - 8 && memcmp(buf, w + 6, n) == 0, "packed payload: %zu bytes, %d sets", n, used);
}

static void test_parser(void)
{
	struct iw_config c;
	v1_config(&c);
	open_hub(&c);
	uint8_t in[256], good[64];
	size_t g = fixture("ping", good, sizeof good);
	size_t n = 0;
	const char *junk = "\x01\x02\xa5\xa5\x5a\xff\xff"; /* a bogus length 0xffff */
	memcpy(in + n, junk, 7);
	n += 7;
	memcpy(in + n, good, g); /* a frame with a corrupted CRC */
	in[n + g - 1] ^= 0x40;
	n += g;
	memcpy(in + n, good, g); /* then a good one */
	n += g;
	outn = 0;
	iw_hub_rx(&hub, in, n, 0);
	CHECK(hub.rx.good == 1 && hub.rx.crc_errors == 1, "good %u crc %u", hub.rx.good, hub.rx.crc_errors);
	uint8_t w[64];
	size_t m = fixture("ack_ping", w, sizeof w);
	CHECK(outn == m && memcmp(out, w, m) == 0, "the good PING is answered once");
	/* An incomplete frame is given up after 100 ms without a byte. */
	iw_hub_rx(&hub, good, 5, 1000000000u);
	CHECK(hub.rx.len == 5, "incomplete frame kept");
	iw_hub_poll(&hub, 1050000000u);
	CHECK(hub.rx.len == 5, "kept for 50 ms");
	iw_hub_poll(&hub, 1100000001u);
	CHECK(hub.rx.len == 0, "given up after 100 ms");
	/* Every byte value as a length, at every offset: never reads past the buffer. */
	for (unsigned k = 0; k < 65536; k += 251) {
		uint8_t f[6] = { 0xA5, 0x5A, 0x08, 1, (uint8_t)k, (uint8_t)(k >> 8) };
		iw_hub_rx(&hub, f, 6, 2000000000u);
	}
	iw_hub_poll(&hub, 4000000000u);
	CHECK(hub.rx.len == 0, "nothing left after idle");
}

static void test_naks(void)
{
	struct iw_config c;
	v1_config(&c);
	c.caps = IW_CAP_DEVSLP | IW_CAP_MARKS; /* no power switches */
	c.link_bytes_sec = 92160;
	open_hub(&c);
	uint8_t p[40] = { 0 };
	expect_nak(0x42, p, 0, IW_NAK_UNKNOWN_COMMAND, "unknown type");
	expect_nak(IW_LINK, p, 4, IW_NAK_UNKNOWN_COMMAND, "LINK to a v1 hub");
	expect_nak(IW_START, p, 5, IW_NAK_BAD_LENGTH, "START of 5 bytes");
	expect_nak(IW_PING, p, 33, IW_NAK_BAD_LENGTH, "PING of 33 bytes");
	uint8_t port9[2] = { 9, 1 }, v2[2] = { 1, 2 }, pw[2] = { 1, 0 };
	expect_nak(IW_SET_DEVSLP, port9, 2, IW_NAK_BAD_PORT, "DEVSLP port 9");
	expect_nak(IW_SET_DEVSLP, v2, 2, IW_NAK_BAD_VALUE, "DEVSLP level 2");
	expect_nak(IW_PORT_POWER, pw, 2, IW_NAK_UNSUPPORTED, "PORT_POWER without switches");
	uint8_t m[4] = { 1, 2, 3, 4 };
	expect_nak(IW_MARK, m, 4, IW_NAK_NOT_STREAMING, "MARK while idle");
	uint8_t st[6] = { 0xd2, 0x04, 0, 0, 3, 0 }; /* 1234 Hz */
	expect_nak(IW_START, st, 6, IW_NAK_BAD_RATE, "START 1234 Hz");
	uint8_t mask0[6] = { 0xe8, 0x03, 0, 0, 0, 0 };
	expect_nak(IW_START, mask0, 6, IW_NAK_BAD_PORT, "START port mask 0");
	uint8_t fast[6] = { 0x10, 0x27, 0, 0, 3, 0 }; /* 10 kHz, 2 ports on a UART */
	expect_nak(IW_START, fast, 6, IW_NAK_BANDWIDTH, "START beyond the link");
	uint8_t ok[6] = { 0xe8, 0x03, 0, 0, 3, 0 };
	outn = 0;
	send(IW_START, 10, ok, 6, 0);
	CHECK(outn == 15 && out[2] == IW_ACK, "START 1 kHz acknowledged");
	expect_nak(IW_START, ok, 6, IW_NAK_STREAMING, "START while streaming");
	uint8_t rs[12] = { 0 };
	rs[8] = 1;
	/* A v2 hub on a link left at v1. */
	c.protocol = 2;
	open_hub(&c);
	expect_nak(IW_RESEND, rs, 12, IW_NAK_NOT_NEGOTIATED, "RESEND on a v1 link");
	uint8_t lk[4] = { 2, 0, 0, 1 };
	send(IW_LINK, 1, lk, 4, 0);
	expect_nak(IW_START, ok, 6, IW_NAK_BAD_LENGTH, "a 6-byte START on a v2 link");
	uint8_t f9[8] = { 0xe8, 0x03, 0, 0, 3, 0, 9, 0 }, f0[8] = { 0xe8, 0x03, 0, 0, 3, 0, 0, 0 };
	expect_nak(IW_START, f9, 8, IW_NAK_BAD_FORMAT, "START format 9");
	expect_nak(IW_START, f0, 8, IW_NAK_BAD_FORMAT, "START format 0");
	expect_nak(IW_RESEND, rs, 12, IW_NAK_NEVER_SENT, "RESEND of samples not taken");
	uint8_t lkbad[4] = { 3, 0, 0, 1 };
	expect_nak(IW_LINK, lkbad, 4, IW_NAK_BAD_VALUE, "LINK version 3 to a v2 hub");
	c.ring_bytes = 0;
	open_hub(&c);
	send(IW_LINK, 1, lk, 4, 0);
	uint8_t f2[8] = { 0xe8, 0x03, 0, 0, 1, 0, 2, 0 };
	send(IW_START, 2, f2, 8, 0);
	iw_hub_poll(&hub, 50000000u);
	rs[8] = 5;
	expect_nak(IW_RESEND, rs, 12, IW_NAK_NO_RING, "RESEND to a hub without a ring");
}

/* frame_at returns the n-th frame of out (0-based), its length in *len. */
static const uint8_t *frame_at(int n, size_t *len)
{
	size_t at = 0;
	for (int i = 0; at + 8 <= outn; i++) {
		size_t l = 8u + (size_t)(out[at + 4] | out[at + 5] << 8);
		if (i == n) {
			*len = l;
			return out + at;
		}
		at += l;
	}
	return NULL;
}

static void test_resend(void)
{
	struct iw_config c;
	v1_config(&c);
	c.protocol = 2;
	c.ring_bytes = 200; /* 10 sets of 1 port x 2 rails x 5 bytes, then 20 */
	open_hub(&c);
	uint8_t lk[4] = { 2, 0, 0, 1 }, st[8] = { 0xe8, 0x03, 0, 0, 1, 0, 2, 0 };
	send(IW_LINK, 1, lk, 4, 0);
	send(IW_START, 2, st, 8, 0);
	outn = 0;
	iw_hub_poll(&hub, 30000000u); /* 30 samples: 3 blocks of 10; the ring holds 20 */
	uint8_t live[512];
	size_t ln = 0;
	for (int i = 1; i <= 2; i++) { /* the values of samples 10-29 as sent live */
		size_t l;
		const uint8_t *f = frame_at(i, &l);
		CHECK(f && f[2] == IW_SAMPLES2 && l == 22 + 100, "live block %d", i);
		if (!f)
			return;
		memcpy(live + ln, f + 20, 100);
		ln += 100;
	}
	outn = 0;
	uint8_t rs[12] = { 5, 0, 0, 0, 0, 0, 0, 0, 25, 0, 0, 0 }; /* 5 ... 29 */
	send(IW_RESEND, 7, rs, 12, 30000000u);
	size_t l1, l2;
	const uint8_t *ex = frame_at(0, &l1), *re = frame_at(1, &l2);
	CHECK(ex && ex[2] == IW_EXPIRED && ex[3] == 7 && ex[6] == 5 && ex[14] == 5, "EXPIRED 5-9 first");
	CHECK(re && re[2] == IW_SAMPLES2 && re[3] == 7 && re[6] == 10 && re[16] == 20 && re[18] == IW_SAMPLES_RESENT && l2 == 22 + 200 &&
		      memcmp(re + 20, live, 200) == 0,
	      "samples 10-29 again in one frame, RESENT, the values sent live");
	CHECK(frame_at(2, &l1) == NULL, "nothing more");
}

/* A fake INA228: its registers as the datasheet lays them out. */
static uint16_t ina_regs16[64];
static uint32_t ina_cur_raw, ina_vbus_raw;
static int ina_read(void *ctx, uint8_t addr, uint8_t reg, uint8_t *b, int n)
{
	(void)ctx;
	if (addr != 0x45)
		return -1;
	uint32_t v = reg == INA228_CURRENT ? ina_cur_raw : reg == INA228_VBUS ? ina_vbus_raw : ina_regs16[reg & 63];
	for (int i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	return 0;
}
static int ina_write(void *ctx, uint8_t addr, uint8_t reg, uint16_t v)
{
	(void)ctx;
	if (addr != 0x45)
		return -1;
	ina_regs16[reg & 63] = v;
	return 0;
}

static void test_ina228(void)
{
	struct ina228_bus bus = { NULL, ina_read, ina_write };
	struct ina228 d;
	ina_regs16[INA228_MANUFACTURER_ID] = 0x5449;
	ina_regs16[INA228_DEVICE_ID] = 0x2281;
	CHECK(ina228_init(&d, &bus, 0x45, 20000, 8000000, 2, 0) == 0, "init");
	/* SHUNT_CAL = 13107.2e6 x 8 uA x 20 mOhm = 2097.15 */
	CHECK(ina_regs16[INA228_SHUNT_CAL] == 2097, "SHUNT_CAL %u", ina_regs16[INA228_SHUNT_CAL]);
	CHECK(d.lsb_pa > 7999000 && d.lsb_pa < 8000000, "LSB %u pA", d.lsb_pa);
	CHECK(ina_regs16[INA228_ADC_CONFIG] == 0xB480, "ADC_CONFIG %04x", ina_regs16[INA228_ADC_CONFIG]);
	ina_vbus_raw = 25600u << 4; /* 5.000 V */
	ina_cur_raw = 0xFFFFF0;     /* -1 count */
	uint16_t b;
	int32_t cur;
	CHECK(ina228_read(&d, &b, &cur) == 0 && b == 4000 && cur == -1, "5 V, -1: %u %d", b, cur);
	ina_cur_raw = 0x7FFFF0;
	ina228_read(&d, &b, &cur);
	CHECK(cur == 524287, "full scale %d", cur);
	ina_regs16[INA228_DEVICE_ID] = 0x2261; /* an INA226's id */
	CHECK(ina228_init(&d, &bus, 0x45, 20000, 8000000, 2, 0) == -2, "not an INA228");
	CHECK(ina228_init(&d, &bus, 0x44, 20000, 8000000, 2, 0) == -1, "no device");
}

int main(int argc, char **argv)
{
	fixdir = argc > 1 ? argv[1] : "../fixtures/hub";
	test_crc();
	test_fixtures_v1();
	test_fixtures_v2();
	test_packed_fixture();
	test_parser();
	test_naks();
	test_resend();
	test_ina228();
	printf("firmware core: %d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
