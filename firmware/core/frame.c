#include <string.h>

#include "crc16.h"
#include "frame.h"

uint8_t *iw_frame_begin(uint8_t *buf, uint8_t t, uint8_t seq)
{
	buf[0] = IW_START0;
	buf[1] = IW_START1;
	buf[2] = t;
	buf[3] = seq;
	return buf + IW_HEADER_LEN;
}

size_t iw_frame_finish(uint8_t *buf, size_t n)
{
	buf[4] = (uint8_t)n;
	buf[5] = (uint8_t)(n >> 8);
	uint16_t c = iw_crc16(IW_CRC16_INIT, buf + 2, 4 + n);
	buf[IW_HEADER_LEN + n] = (uint8_t)(c >> 8);
	buf[IW_HEADER_LEN + n + 1] = (uint8_t)c;
	return n + IW_HEADER_LEN + IW_TRAILER_LEN;
}

void iw_parser_init(struct iw_parser *p, uint8_t *buf, size_t cap, iw_frame_fn fn, void *ctx)
{
	memset(p, 0, sizeof *p);
	p->buf = buf;
	p->cap = cap;
	p->fn = fn;
	p->ctx = ctx;
	p->idle_ns = 100000000ull; /* 100 ms, as the spec's reader */
}

/* drop removes the first k bytes of the buffer. */
static void drop(struct iw_parser *p, size_t k)
{
	memmove(p->buf, p->buf + k, p->len - k);
	p->len -= k;
}

/* skip1 discards one byte and resynchronises to the next 0xA5. */
static void skip1(struct iw_parser *p)
{
	size_t k = 1;
	while (k < p->len && p->buf[k] != IW_START0)
		k++;
	p->discarded += (uint32_t)k;
	if (!p->discarding)
		p->resyncs++;
	p->discarding = 1;
	drop(p, k);
}

/* scan hands on every complete good frame in the buffer. */
static void scan(struct iw_parser *p)
{
	for (;;) {
		if (p->len == 0)
			return;
		if (p->buf[0] != IW_START0 || (p->len >= 2 && p->buf[1] != IW_START1)) {
			skip1(p);
			continue;
		}
		if (p->len < IW_HEADER_LEN)
			return;
		size_t n = (size_t)p->buf[4] | (size_t)p->buf[5] << 8;
		if (n > IW_MAX_PAYLOAD || n + IW_HEADER_LEN + IW_TRAILER_LEN > p->cap) {
			skip1(p);
			continue;
		}
		size_t whole = n + IW_HEADER_LEN + IW_TRAILER_LEN;
		if (p->len < whole)
			return;
		/* Running the CRC over type ... CRC yields 0 for a good frame. */
		if (iw_crc16(IW_CRC16_INIT, p->buf + 2, whole - 2) != 0) {
			p->crc_errors++;
			skip1(p);
			continue;
		}
		p->discarding = 0;
		p->good++;
		struct iw_frame f = { p->buf[2], p->buf[3], (uint16_t)n, p->buf + IW_HEADER_LEN };
		p->fn(p->ctx, &f);
		drop(p, whole);
	}
}

void iw_parser_feed(struct iw_parser *p, const uint8_t *b, size_t n, uint64_t now_ns)
{
	if (n > 0)
		p->last_ns = now_ns;
	while (n > 0) {
		size_t k = p->cap - p->len;
		if (k > n)
			k = n;
		memcpy(p->buf + p->len, b, k);
		p->len += k;
		b += k;
		n -= k;
		scan(p);
		if (p->len == p->cap) /* cannot happen after scan (a frame fits cap), but never spin */
			skip1(p);
	}
}

void iw_parser_poll(struct iw_parser *p, uint64_t now_ns)
{
	while (p->len > 0 && now_ns - p->last_ns >= p->idle_ns) {
		size_t before = p->len;
		skip1(p);
		scan(p);
		if (p->len >= before)
			break;
	}
}
