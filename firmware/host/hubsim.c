/* hubsim: the firmware's protocol core on Linux.
 *
 *   hubsim [--ports N] [--protocol V] [--seed S] [--corrupt P] [--max-frame N] [--ring BYTES]
 *       serves the hub protocol on a pseudo-terminal whose path it prints on
 *       its first line; a simulated drive (sim/drive.c) behind each port.
 *   hubsim --script FILE
 *       writes to stdout what the hub sends for a scripted session (the
 *       host's IDENTIFY, LINK, READ_CAL and START, then 10 ms steps of
 *       streaming), sample counts read from the script's counts file: the
 *       byte-for-byte comparison with idlewatt's emulator (firmware/golden_test.go).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "../core/hub.h"
#include "../core/pack.h"
#include "../sim/drive.h"

static uint8_t ring[1 << 20], sets[64 << 10], fb[IW_MAX_FRAME], rxbuf[IW_MAX_FRAME];
static uint32_t zb[16384 * 2], zi[16384 * 2];

static void die(const char *msg)
{
	fprintf(stderr, "hubsim: %s\n", msg);
	exit(2);
}

/* --- the default hub -------------------------------------------------------- */

static void default_config(struct iw_config *c, int ports, int protocol, uint64_t seed)
{
	static char serial[32];
	memset(c, 0, sizeof *c);
	c->protocol = (uint8_t)protocol;
	c->ports = (uint8_t)ports;
	c->rails = 2;
	c->rail[0] = (struct iw_rail){ IW_RAIL_5V, 5250, 50000, 8000000 };
	c->rail[1] = (struct iw_rail){ IW_RAIL_12V, 12600, 100000, 10000000 };
	c->nrates = 5;
	uint32_t rates[] = { 100, 1000, 2000, 5000, 10000 };
	memcpy(c->rates, rates, sizeof rates);
	c->caps = IW_CAP_DEVSLP | IW_CAP_PORT_POWER | IW_CAP_MARKS;
	c->bus_lsb_uv = 1250;
	c->link_bytes_sec = 1000000;
	snprintf(serial, sizeof serial, "SIM-%llu", (unsigned long long)seed);
	c->model = "idlewatt open hub";
	c->firmware = "hubsim-0.1";
	c->serial = serial;
	c->max_frame = 4096;
	c->formats = 7;
	for (int ch = 0; ch < ports * 2; ch++) {
		int r = ch % 2;
		uint32_t shunt = r == 0 ? 20000 : 10000, lsb = c->rail[r].lsb_na;
		/* The INA226-equivalent CAL register of the 16-bit LSB, for the host's audit. */
		uint32_t cal = (uint32_t)(0.00512 / ((double)lsb * 1e-9 * (double)shunt * 1e-6) + 0.5);
		c->cal[ch] = (struct iw_cal){ (uint16_t)cal, shunt, lsb, c->rail[r].wide_lsb_pa };
	}
	c->ring = ring;
	c->ring_bytes = sizeof ring;
}

static void buffers(struct iw_config *c)
{
	c->sets = sets;
	c->sets_cap = sizeof sets;
	c->fb = fb;
	c->fb_cap = sizeof fb;
	c->zb = zb;
	c->zi = zi;
	c->z_cap = sizeof zb / sizeof zb[0];
	c->rxbuf = rxbuf;
	c->rx_cap = sizeof rxbuf;
}

/* --- pty mode ---------------------------------------------------------------- */

struct live {
	struct iw_config *c;
	struct iw_simdrive drive[IW_MAX_PORTS];
	uint8_t *q;
	size_t cap, head, used;
	double corrupt;
	uint64_t rng, corrupted;
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static double uniform(struct live *l)
{
	l->rng ^= l->rng << 13;
	l->rng ^= l->rng >> 7;
	l->rng ^= l->rng << 17;
	return (double)(l->rng >> 11) / 9007199254740992.0;
}

/* hubsim_rate is the stream's rate, for the drive model's timing. */
static uint32_t hubsim_rate = 1000;

static int live_read(void *ctx, uint64_t idx, int ch, int fmt, uint16_t *bus, int32_t *cur, uint32_t *over_ua)
{
	struct live *l = ctx;
	int rails = l->c->rails, port = ch / rails + 1, r = ch % rails;
	struct iw_simdrive *d = &l->drive[port - 1];
	int64_t ua;
	uint32_t rate = hubsim_rate;
	(void)over_ua;
	if (l->c->rail[r].id == IW_RAIL_5V) {
		*bus = (uint16_t)(4000 + iw_simdrive_noise(d, 1));
		ua = iw_simdrive_current(d, idx, rate);
	} else if (l->c->rail[r].id == IW_RAIL_12V) {
		*bus = (uint16_t)(9600 + iw_simdrive_noise(d, 1));
		ua = iw_simdrive_noise(d, 200);
	} else {
		*bus = 2640;
		ua = 0;
	}
	int64_t lsb_pa = fmt == IW_FMT16 ? (int64_t)l->c->cal[ch].lsb_na * 1000 : (int64_t)l->c->cal[ch].wide_lsb_pa;
	int64_t c = (ua * 1000000 + (ua >= 0 ? lsb_pa / 2 : -lsb_pa / 2)) / lsb_pa;
	int64_t hi = fmt == IW_FMT16 ? 32767 : 524287;
	int clamped = c > hi || c < -hi - 1;
	if (c > hi)
		c = hi;
	if (c < -hi - 1)
		c = -hi - 1;
	*cur = (int32_t)c;
	if (clamped)
		*over_ua = (uint32_t)(ua < 0 ? -ua : ua);
	return clamped;
}

static void live_devslp(void *ctx, int port, int asserted, uint64_t idx)
{
	struct live *l = ctx;
	iw_simdrive_pin(&l->drive[port - 1], asserted, idx);
}

static size_t live_room(void *ctx)
{
	struct live *l = ctx;
	return l->cap - l->used;
}

static void live_write(void *ctx, const uint8_t *b, size_t n)
{
	struct live *l = ctx;
	for (size_t i = 0; i < n; i++) {
		uint8_t v = b[i];
		if (l->corrupt > 0 && uniform(l) < l->corrupt) {
			v ^= (uint8_t)(1 + (l->rng >> 20) % 255);
			l->corrupted++;
		}
		l->q[(l->head + l->used) % l->cap] = v;
		l->used++;
	}
}

static volatile sig_atomic_t stop;
static void on_signal(int s) { (void)s; stop = 1; }

static int serve(int ports, int protocol, uint64_t seed, double corrupt, int max_frame, long ring_bytes)
{
	struct iw_config c;
	default_config(&c, ports, protocol, seed);
	buffers(&c);
	if (max_frame)
		c.max_frame = (uint16_t)max_frame;
	if (ring_bytes >= 0)
		c.ring_bytes = (uint32_t)(ring_bytes < (long)sizeof ring ? ring_bytes : (long)sizeof ring);
	static uint8_t q[4 << 20];
	struct live l = { .c = &c, .q = q, .cap = sizeof q, .corrupt = corrupt, .rng = seed * 2654435761u + 7 };
	for (int p = 0; p < ports; p++)
		iw_simdrive_init(&l.drive[p], p + 1, seed);
	struct iw_platform pl = { &l, live_read, live_devslp, NULL, live_room, live_write };
	struct iw_hub h;
	if (iw_hub_init(&h, &c, &pl) != 0)
		die("bad hub configuration");

	int m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m < 0 || grantpt(m) || unlockpt(m))
		die("cannot open a pseudo-terminal");
	const char *name = ptsname(m);
	/* Hold the other end open, raw, so nothing echoes before the host opens
	 * it and the master never reads EIO. */
	int s = open(name, O_RDWR | O_NOCTTY);
	if (s < 0)
		die("cannot open the pty's slave");
	struct termios t;
	tcgetattr(s, &t);
	cfmakeraw(&t);
	tcsetattr(s, TCSANOW, &t);
	fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK);
	printf("%s\n", name);
	fflush(stdout);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);

	uint8_t in[512];
	while (!stop) {
		struct pollfd pf = { m, POLLIN | (l.used ? POLLOUT : 0), 0 };
		poll(&pf, 1, 1);
		uint64_t now = now_ns();
		ssize_t n = read(m, in, sizeof in);
		if (n > 0) {
			iw_hub_rx(&h, in, (size_t)n, now);
			hubsim_rate = h.rate ? h.rate : 1000;
		}
		hubsim_rate = h.rate ? h.rate : 1000;
		iw_hub_poll(&h, now);
		while (l.used > 0) {
			size_t k = l.cap - l.head < l.used ? l.cap - l.head : l.used;
			ssize_t w = write(m, l.q + l.head, k);
			if (w <= 0)
				break;
			l.head = (l.head + (size_t)w) % l.cap;
			l.used -= (size_t)w;
		}
	}
	fprintf(stderr, "hubsim: %u commands (%u refused), %u blocks, %u samples lost to overruns, %u resends, %llu bytes corrupted\n",
		h.st.frames_in, h.st.bad_commands, h.st.blocks, h.st.lost_samples, h.st.resends, (unsigned long long)l.corrupted);
	return 0;
}

/* --- script mode --------------------------------------------------------------- */

struct script {
	uint8_t *counts; /* per index, per channel: bus u16, cur i32, little-endian */
	size_t n;        /* sample sets */
	int nch;
};

static int script_read(void *ctx, uint64_t idx, int ch, int fmt, uint16_t *bus, int32_t *cur, uint32_t *over_ua)
{
	struct script *s = ctx;
	(void)fmt;
	(void)over_ua;
	if (idx >= s->n) {
		*bus = 0;
		*cur = 0;
		return 0;
	}
	const uint8_t *q = s->counts + ((size_t)idx * (size_t)s->nch + (size_t)ch) * 6;
	*bus = (uint16_t)(q[0] | q[1] << 8);
	*cur = (int32_t)((uint32_t)q[2] | (uint32_t)q[3] << 8 | (uint32_t)q[4] << 16 | (uint32_t)q[5] << 24);
	return 0;
}

static size_t script_room(void *ctx) { (void)ctx; return (size_t)1 << 30; }
static void script_write(void *ctx, const uint8_t *b, size_t n) { (void)ctx; fwrite(b, 1, n, stdout); }

static void send_cmd(struct iw_hub *h, uint8_t type, uint8_t seq, const uint8_t *p, size_t n, uint64_t now)
{
	uint8_t f[64];
	memcpy(iw_frame_begin(f, type, seq), p, n);
	size_t len = iw_frame_finish(f, n);
	iw_hub_rx(h, f, len, now);
}

static int run_script(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		die("cannot open the script");
	struct iw_config c;
	memset(&c, 0, sizeof c);
	buffers(&c);
	c.ring = ring;
	static char model[64], fw[64], serial[64], counts[4096];
	int rails = 0, linkframe = 256, ncal = 0;
	uint32_t rate = 1000, mask = 1, fmt = 0, dur_ms = 1000;
	char line[8192];
	while (fgets(line, sizeof line, f)) {
		char *v = strchr(line, ' ');
		if (!v)
			continue;
		*v++ = 0;
		v[strcspn(v, "\n")] = 0;
		unsigned a, b, cc, d, e;
		if (!strcmp(line, "protocol")) c.protocol = (uint8_t)atoi(v);
		else if (!strcmp(line, "ports")) c.ports = (uint8_t)atoi(v);
		else if (!strcmp(line, "rail") && sscanf(v, "%u %u %u %u", &a, &b, &cc, &d) == 4 && rails < IW_MAX_RAILS)
			c.rail[rails++] = (struct iw_rail){ (uint8_t)a, (uint16_t)b, cc, d };
		else if (!strcmp(line, "rates")) {
			char *t = strtok(v, " ");
			while (t && c.nrates < IW_MAX_RATES) {
				c.rates[c.nrates++] = (uint32_t)strtoul(t, NULL, 10);
				t = strtok(NULL, " ");
			}
		} else if (!strcmp(line, "caps")) c.caps = (uint8_t)atoi(v);
		else if (!strcmp(line, "buslsb")) c.bus_lsb_uv = (uint16_t)atoi(v);
		else if (!strcmp(line, "link")) c.link_bytes_sec = (uint32_t)strtoul(v, NULL, 10);
		else if (!strcmp(line, "model")) snprintf(model, sizeof model, "%s", v);
		else if (!strcmp(line, "firmware")) snprintf(fw, sizeof fw, "%s", v);
		else if (!strcmp(line, "serial")) snprintf(serial, sizeof serial, "%s", v);
		else if (!strcmp(line, "maxframe")) c.max_frame = (uint16_t)atoi(v);
		else if (!strcmp(line, "ring")) c.ring_bytes = (uint32_t)strtoul(v, NULL, 10);
		else if (!strcmp(line, "formats")) c.formats = (uint8_t)atoi(v);
		else if (!strcmp(line, "cal") && sscanf(v, "%u %u %u %u %u", &a, &b, &cc, &d, &e) == 5 && a < IW_MAX_CHANS) {
			c.cal[a] = (struct iw_cal){ (uint16_t)b, cc, d, e };
			ncal++;
		} else if (!strcmp(line, "linkframe")) linkframe = atoi(v);
		else if (!strcmp(line, "start") && sscanf(v, "%u %u %u", &a, &b, &cc) == 3) {
			rate = a;
			mask = b;
			fmt = cc;
		} else if (!strcmp(line, "duration_ms")) dur_ms = (uint32_t)strtoul(v, NULL, 10);
		else if (!strcmp(line, "counts")) snprintf(counts, sizeof counts, "%s", v);
	}
	fclose(f);
	c.rails = (uint8_t)rails;
	c.model = model;
	c.firmware = fw;
	c.serial = serial;
	if (c.ring_bytes > sizeof ring)
		die("script: ring larger than this build's");
	struct script s = { .nch = c.ports * c.rails };
	FILE *cf = fopen(counts, "rb");
	if (!cf)
		die("cannot open the counts file");
	fseek(cf, 0, SEEK_END);
	long size = ftell(cf);
	fseek(cf, 0, SEEK_SET);
	s.counts = malloc((size_t)size + 1);
	if (!s.counts || fread(s.counts, 1, (size_t)size, cf) != (size_t)size)
		die("cannot read the counts file");
	fclose(cf);
	s.n = (size_t)size / ((size_t)s.nch * 6);
	struct iw_platform pl = { &s, script_read, NULL, NULL, script_room, script_write };
	struct iw_hub h;
	if (iw_hub_init(&h, &c, &pl) != 0)
		die("script: bad hub configuration");
	uint8_t seq = 0, p[8];
	send_cmd(&h, IW_IDENTIFY, seq, p, 0, 0);
	if (c.protocol >= 2) {
		seq++;
		p[0] = 2;
		p[1] = 0;
		p[2] = (uint8_t)linkframe;
		p[3] = (uint8_t)(linkframe >> 8);
		send_cmd(&h, IW_LINK, seq, p, 4, 0);
	}
	seq++;
	send_cmd(&h, IW_READ_CAL, seq, p, 0, 0);
	seq++;
	p[0] = (uint8_t)rate;
	p[1] = (uint8_t)(rate >> 8);
	p[2] = (uint8_t)(rate >> 16);
	p[3] = (uint8_t)(rate >> 24);
	p[4] = (uint8_t)mask;
	p[5] = 0;
	p[6] = (uint8_t)fmt;
	p[7] = 0;
	send_cmd(&h, IW_START, seq, p, c.protocol >= 2 ? 8 : 6, 0);
	uint64_t d = (uint64_t)dur_ms * 1000000u;
	for (uint64_t t = 0; t < d;) {
		t += 10000000u;
		if (t > d)
			t = d;
		iw_hub_poll(&h, t);
	}
	fflush(stdout);
	(void)ncal;
	return 0;
}

int main(int argc, char **argv)
{
	int ports = 2, protocol = 2, max_frame = 0;
	long ring_bytes = -1;
	uint64_t seed = 1;
	double corrupt = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--script") && v)
			return run_script(v);
		else if (!strcmp(a, "--ports") && v) ports = atoi(v), i++;
		else if (!strcmp(a, "--protocol") && v) protocol = atoi(v), i++;
		else if (!strcmp(a, "--seed") && v) seed = strtoull(v, NULL, 10), i++;
		else if (!strcmp(a, "--corrupt") && v) corrupt = atof(v), i++;
		else if (!strcmp(a, "--max-frame") && v) max_frame = atoi(v), i++;
		else if (!strcmp(a, "--ring") && v) ring_bytes = atol(v), i++;
		else {
			fprintf(stderr, "usage: hubsim [--ports 1-4] [--protocol 1|2] [--seed N] [--corrupt P] [--max-frame N] [--ring BYTES] | --script FILE\n");
			return 2;
		}
	}
	if (ports < 1 || ports > 4 || protocol < 1 || protocol > 2 || corrupt < 0 || corrupt > 0.1)
		die("--ports 1-4, --protocol 1 or 2, --corrupt 0-0.1");
	return serve(ports, protocol, seed, corrupt, max_frame, ring_bytes);
}
