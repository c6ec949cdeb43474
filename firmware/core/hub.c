#include <string.h>

#include "hub.h"
#include "pack.h"

/* Byte order helpers: every multi-byte integer on the wire is little-endian. */
static uint8_t *le16(uint8_t *b, uint16_t v) { b[0] = (uint8_t)v; b[1] = (uint8_t)(v >> 8); return b + 2; }
static uint8_t *le32(uint8_t *b, uint32_t v) { for (int i = 0; i < 4; i++) b[i] = (uint8_t)(v >> (8 * i)); return b + 4; }
static uint8_t *le64(uint8_t *b, uint64_t v) { for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i)); return b + 8; }
static uint32_t rd32(const uint8_t *b) { return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24; }
static uint64_t rd64(const uint8_t *b) { return (uint64_t)rd32(b) | (uint64_t)rd32(b + 4) << 32; }

static int chans_of(const struct iw_hub *h) { return h->c.rails * h->nports; }

static int format_width(int f) { return f == IW_FMT16 ? 4 : (f == IW_FMT20 || f == IW_FMT_PACKED) ? 5 : 0; }

/* --- bandwidth, as meter/hub/bandwidth.go and v2.go compute it ---------- */

static int block_samples(uint32_t rate, int chans)
{
	int n = (int)(rate / IW_BLOCK_DIVISOR);
	if (n < 1)
		n = 1;
	if (chans < 1)
		return n;
	int most = (int)(IW_MAX_PAYLOAD - 12) / (chans * 4);
	return n < most ? n : most;
}

static int block_samples2(int chans, int width, int max_frame)
{
	if (chans < 1 || width < 1)
		return 1;
	int n = (max_frame - 22) / (chans * width);
	if (n > 0xFFFF)
		n = 0xFFFF;
	return n < 1 ? 1 : n;
}

double iw_stream_bytes(uint32_t rate, int chans)
{
	int s = block_samples(rate, chans);
	int per_block = 8 + 12 + s * chans * 4;
	return (double)rate / (double)s * (double)per_block;
}

double iw_stream_bytes2(uint32_t rate, int chans, int fmt, int max_frame)
{
	int w = format_width(fmt), over = 22;
	if (fmt == IW_FMT_PACKED) {
		w = 3;
		over = 22 + chans * 6;
	}
	int n = (int)(rate / IW_BLOCK_DIVISOR);
	if (n < 1)
		n = 1;
	int per = block_samples2(chans, w, max_frame - (over - 22));
	int frames = (n + per - 1) / per;
	int per_block = frames * over + n * chans * w;
	return (double)rate / (double)n * (double)per_block;
}

/* --- sending -------------------------------------------------------------- */

static int fits(struct iw_hub *h, size_t n) { return h->p.room(h->p.ctx) >= n; }

/* put sends one frame of payload n built in fb (or drops it while the hub is
 * quiet after a reconnection, or when the link has no room). */
static void put(struct iw_hub *h, size_t n)
{
	size_t whole = iw_frame_finish(h->c.fb, n);
	if (h->quiet || !fits(h, whole))
		return;
	h->p.write(h->p.ctx, h->c.fb, whole);
}

static uint8_t *begin(struct iw_hub *h, uint8_t type, uint8_t seq) { return iw_frame_begin(h->c.fb, type, seq); }

static uint8_t next_seq(struct iw_hub *h) { return h->useq++; }

static void nak(struct iw_hub *h, uint8_t seq, uint8_t cmd, uint8_t reason)
{
	uint8_t *b = begin(h, IW_NAK, seq);
	b[0] = cmd;
	b[1] = reason;
	h->st.naks++;
	put(h, 2);
}

static void ack0(struct iw_hub *h, uint8_t seq, uint8_t cmd)
{
	uint8_t *b = begin(h, IW_ACK, seq);
	b[0] = cmd;
	put(h, 1);
}

static void event(struct iw_hub *h, uint8_t kind, uint8_t port, uint64_t idx, uint32_t value)
{
	uint8_t *b0 = begin(h, IW_EVENT, next_seq(h)), *b = b0;
	*b++ = kind;
	*b++ = port;
	b = le16(b, 0);
	b = le64(b, idx);
	b = le32(b, value);
	put(h, (size_t)(b - b0));
}

static void identity(struct iw_hub *h, uint8_t seq)
{
	const struct iw_config *c = &h->c;
	uint8_t *b0 = begin(h, IW_IDENTITY, seq), *b = b0;
	*b++ = c->protocol;
	*b++ = c->ports;
	*b++ = c->rails;
	*b++ = c->nrates;
	*b++ = c->caps;
	*b++ = 0;
	b = le16(b, c->bus_lsb_uv);
	b = le32(b, c->link_bytes_sec);
	for (int r = 0; r < c->rails; r++) {
		*b++ = c->rail[r].id;
		*b++ = 0;
		b = le16(b, c->rail[r].max_mv);
		b = le32(b, c->rail[r].lsb_na);
	}
	for (int i = 0; i < c->nrates; i++)
		b = le32(b, c->rates[i]);
	const char *s[3] = { c->model, c->firmware, c->serial };
	for (int i = 0; i < 3; i++) {
		size_t n = s[i] ? strlen(s[i]) : 0;
		if (n > 32)
			n = 32;
		*b++ = (uint8_t)n;
		memcpy(b, s[i], n);
		b += n;
	}
	if (c->protocol >= 2) {
		b = le16(b, c->max_frame);
		b = le32(b, c->ring_bytes);
		*b++ = c->formats;
		*b++ = 0;
		for (int r = 0; r < c->rails; r++)
			b = le32(b, c->rail[r].wide_lsb_pa);
	}
	put(h, (size_t)(b - b0));
}

static void calibration(struct iw_hub *h, uint8_t seq)
{
	const struct iw_config *c = &h->c;
	int wide = h->link_ver >= 2, n = c->ports * c->rails;
	uint8_t *b0 = begin(h, IW_CALIBRATION, seq), *b = b0;
	*b++ = (uint8_t)n;
	for (int ch = 0; ch < n; ch++) {
		*b++ = (uint8_t)(ch / c->rails + 1);
		*b++ = c->rail[ch % c->rails].id;
		b = le16(b, c->cal[ch].cal_reg);
		b = le32(b, c->cal[ch].shunt_uohm);
		b = le32(b, c->cal[ch].lsb_na);
		if (wide)
			b = le32(b, c->cal[ch].wide_lsb_pa);
	}
	put(h, (size_t)(b - b0));
}

/* --- the stream ----------------------------------------------------------- */

static uint64_t due(const struct iw_hub *h, uint64_t now)
{
	if (now <= h->e0)
		return 0;
	uint64_t d = now - h->e0, r = h->rate;
	return d / 1000000000u * r + d % 1000000000u * r / 1000000000u;
}

/* mark_index is the sample nearest now: round((now - START) x rate). */
static uint64_t mark_index(const struct iw_hub *h, uint64_t now)
{
	if (!h->streaming || now <= h->e0)
		return h->streaming ? due(h, now) : h->next;
	uint64_t d = now - h->e0, r = h->rate;
	return d / 1000000000u * r + (d % 1000000000u * r + 500000000u) / 1000000000u;
}

static uint64_t next_index(const struct iw_hub *h, uint64_t now) { return h->streaming ? due(h, now) : h->next; }

static int packed(const struct iw_hub *h) { return h->link_ver >= 2 && h->format == IW_FMT_PACKED; }

static int per_frame(const struct iw_hub *h)
{
	if (h->link_ver < 2)
		return block_samples(h->rate, chans_of(h));
	return block_samples2(chans_of(h), format_width(h->format), h->max_frame);
}

static size_t block_bytes(const struct iw_hub *h, int n)
{
	int per = per_frame(h);
	size_t hdr = 8 + 12 + (h->link_ver >= 2 ? 2 : 0);
	return (size_t)((n + per - 1) / per) * hdr + (size_t)n * (size_t)h->set_size;
}

/* copy_sets copies n sets from index first out of the ring into sets. */
static void copy_sets(struct iw_hub *h, uint64_t first, int n)
{
	for (int k = 0; k < n; k++) {
		size_t at = (size_t)((first + (uint64_t)k) % h->ring_n) * (size_t)h->set_size;
		memcpy(h->c.sets + (size_t)k * (size_t)h->set_size, h->c.ring + at, (size_t)h->set_size);
	}
}

/* pack_frames packs n sets from index first (in sets, or with from_ring
 * read from the ring frame by frame) into format-3 frames; with emit it
 * sends them, else it only returns their bytes. */
static size_t pack_frames(struct iw_hub *h, uint64_t first, int n, uint8_t flags, uint8_t seq, int from_ring, int emit)
{
	size_t total = 0;
	int max_payload = h->max_frame - (int)(IW_HEADER_LEN + IW_TRAILER_LEN);
	for (int k = 0; k < n;) {
		int m = n - k, most = 1 + iw_pack_scratch(max_payload, chans_of(h)) / chans_of(h);
		if (m > most)
			m = most;
		const uint8_t *src = h->c.sets + (size_t)k * (size_t)h->set_size;
		if (from_ring) {
			copy_sets(h, first + (uint64_t)k, m);
			src = h->c.sets;
		}
		uint8_t s = seq;
		if (emit && !(flags & IW_SAMPLES_RESENT))
			s = next_seq(h);
		uint8_t *b = begin(h, IW_SAMPLES2, s);
		int used;
		size_t len = iw_pack(b, first + (uint64_t)k, h->mask, flags, src, m, max_payload, h->c.zb, h->c.zi, &used);
		if (used < 1)
			return total;
		if (emit)
			put(h, len);
		total += len + IW_HEADER_LEN + IW_TRAILER_LEN;
		k += used;
	}
	return total;
}

/* send_sets sends n sets as SAMPLES (v1) or SAMPLES2 frames (flags; seq
 * for RESENT ones); the sets come from sets or, with from_ring, the ring. */
static void send_sets(struct iw_hub *h, uint64_t first, int n, uint8_t flags, uint8_t seq, int from_ring)
{
	int per = per_frame(h);
	for (int k = 0; k < n; k += per) {
		int m = n - k < per ? n - k : per;
		const uint8_t *data = h->c.sets + (size_t)k * (size_t)h->set_size;
		if (from_ring) {
			copy_sets(h, first + (uint64_t)k, m);
			data = h->c.sets;
		}
		int v2 = h->link_ver >= 2;
		uint8_t s = v2 && (flags & IW_SAMPLES_RESENT) ? seq : next_seq(h);
		uint8_t *b0 = begin(h, v2 ? IW_SAMPLES2 : IW_SAMPLES, s), *b = b0;
		b = le64(b, first + (uint64_t)k);
		b = le16(b, h->mask);
		b = le16(b, (uint16_t)m);
		if (v2) {
			*b++ = flags;
			*b++ = h->format;
		}
		size_t bytes = (size_t)m * (size_t)h->set_size;
		memmove(b, data, bytes);
		put(h, (size_t)(b - b0) + bytes);
	}
}

static uint8_t *reading(uint8_t *b, int fmt, uint16_t bus, int32_t cur)
{
	b = le16(b, bus);
	if (fmt == IW_FMT16)
		return le16(b, (uint16_t)(int16_t)cur);
	*b++ = (uint8_t)cur;
	*b++ = (uint8_t)(cur >> 8);
	*b++ = (uint8_t)(cur >> 16);
	return b;
}

/* block takes n samples from h->next, keeps them in the ring and sends
 * them, or counts them lost (and reports an OVERRUN later) when they do
 * not fit the link's queue: whole blocks only. */
static void block(struct iw_hub *h, int n)
{
	uint32_t over[IW_MAX_CHANS] = { 0 };
	int rails = h->c.rails;
	uint8_t *b = h->c.sets;
	for (int k = 0; k < n; k++) {
		uint64_t idx = h->next + (uint64_t)k;
		for (int j = 0; j < h->nports; j++) {
			int port = h->portlist[j];
			for (int r = 0; r < rails; r++) {
				int ch = (port - 1) * rails + r;
				uint16_t bus = 0;
				int32_t cur = 0;
				uint32_t oua = 0;
				if (h->powered[port - 1] && h->p.read(h->p.ctx, idx, ch, h->format == IW_FMT16 ? IW_FMT16 : IW_FMT20, &bus, &cur, &oua))
					over[ch] = oua ? oua : 1;
				b = reading(b, h->format, bus, cur);
			}
		}
	}
	uint64_t first = h->next;
	h->next += (uint64_t)n;
	if (h->ring_n > 0)
		for (int k = 0; k < n; k++) {
			size_t at = (size_t)((first + (uint64_t)k) % h->ring_n) * (size_t)h->set_size;
			memcpy(h->c.ring + at, h->c.sets + (size_t)k * (size_t)h->set_size, (size_t)h->set_size);
		}
	size_t size = packed(h) ? pack_frames(h, first, n, 0, 0, 0, 0) : block_bytes(h, n);
	if (h->lost_count > 0 || !fits(h, size)) {
		if (h->lost_count == 0)
			h->lost_first = first;
		h->lost_count += (uint64_t)n;
		h->st.lost_samples += (uint32_t)n;
		return;
	}
	h->st.blocks++;
	if (packed(h))
		pack_frames(h, first, n, 0, 0, 0, 1);
	else
		send_sets(h, first, n, 0, 0, 0);
	for (int c = 0; c < IW_MAX_CHANS; c++)
		if (over[c])
			event(h, IW_EV_OVER_CURRENT, (uint8_t)(c / rails + 1), first, over[c]);
}

/* render takes the samples due by now; with whole, only whole blocks
 * (iw_hub_poll: a hub sends 10 ms blocks however often its loop runs),
 * else every due sample (before a command, so that the samples before it
 * see the state before it, as idlewatt's emulator does). */
static void render_blocks(struct iw_hub *h, uint64_t now, int whole)
{
	if (!h->streaming)
		return;
	if (h->lost_count > 0 && fits(h, 64)) {
		event(h, IW_EV_OVERRUN, 0, h->lost_first, (uint32_t)h->lost_count);
		h->st.overruns++;
		h->lost_count = 0;
	}
	uint64_t target = due(h, now);
	int per = h->link_ver >= 2 ? (int)(h->rate / IW_BLOCK_DIVISOR) : block_samples(h->rate, chans_of(h));
	if (per < 1)
		per = 1;
	while (h->next < target) {
		uint64_t left = target - h->next;
		if (whole && left < (uint64_t)per)
			break;
		block(h, left < (uint64_t)per ? (int)left : per);
	}
}

static void render(struct iw_hub *h, uint64_t now) { render_blocks(h, now, 0); }

static void resend(struct iw_hub *h, uint8_t seq, uint64_t first, uint32_t count)
{
	uint64_t end = first + count, oldest = h->next > h->ring_n ? h->next - h->ring_n : 0;
	h->st.resends++;
	if (first < oldest) {
		uint64_t stop = end < oldest ? end : oldest;
		uint8_t *b0 = begin(h, IW_EXPIRED, seq), *b = b0;
		b = le64(b, first);
		b = le32(b, (uint32_t)(stop - first));
		put(h, (size_t)(b - b0));
		first = stop;
	}
	if (first >= end)
		return;
	int n = (int)(end - first);
	if (packed(h)) {
		if (fits(h, pack_frames(h, first, n, IW_SAMPLES_RESENT, seq, 1, 0)))
			pack_frames(h, first, n, IW_SAMPLES_RESENT, seq, 1, 1);
		return;
	}
	if (!fits(h, block_bytes(h, n)))
		return; /* no room now: the host asks again */
	send_sets(h, first, n, IW_SAMPLES_RESENT, seq, 1);
}

/* largest_frame is the longest frame the stream sends. */
static size_t largest_frame(const struct iw_hub *h)
{
	if (packed(h))
		return (size_t)h->max_frame;
	return 8 + 12 + (h->link_ver >= 2 ? 2u : 0u) + (size_t)per_frame(h) * (size_t)h->set_size;
}

/* sets_needed is the scratch a stream needs: a block, or a frame of
 * re-sent sets. */
static size_t sets_needed(const struct iw_hub *h)
{
	int blk = (int)(h->rate / IW_BLOCK_DIVISOR), fr = per_frame(h);
	if (blk < 1)
		blk = 1;
	if (packed(h))
		fr = 1 + iw_pack_scratch(h->max_frame - 8, chans_of(h)) / chans_of(h);
	int most = blk > fr ? blk : fr;
	return (size_t)most * (size_t)h->set_size;
}

static uint8_t check_start(struct iw_hub *h, uint32_t rate, uint8_t port_mask, uint8_t fmt)
{
	if (h->streaming)
		return IW_NAK_STREAMING;
	if (port_mask == 0 || (port_mask >> h->c.ports) != 0)
		return IW_NAK_BAD_PORT;
	int ok = 0;
	for (int i = 0; i < h->c.nrates; i++)
		ok |= h->c.rates[i] == rate;
	if (!ok)
		return IW_NAK_BAD_RATE;
	if (fmt != 0 && (format_width(fmt) == 0 || !(h->c.formats & (1u << (fmt - 1)))))
		return IW_NAK_BAD_FORMAT;
	int chans = 0;
	for (int p = 0; p < h->c.ports; p++)
		if (port_mask & (1u << p))
			chans += h->c.rails;
	double need = fmt ? iw_stream_bytes2(rate, chans, fmt, h->max_frame) : iw_stream_bytes(rate, chans);
	if (need > 0.9 * (double)h->c.link_bytes_sec)
		return IW_NAK_BANDWIDTH;
	return 0;
}

static void start(struct iw_hub *h, uint32_t rate, uint8_t port_mask, uint8_t fmt, uint64_t now)
{
	h->streaming = 1;
	h->rate = rate;
	h->next = 0;
	h->e0 = now;
	h->mask = 0;
	h->nports = 0;
	h->port_mask = port_mask;
	h->lost_count = 0;
	int r = h->c.rails;
	for (int p = 1; p <= h->c.ports; p++)
		if (port_mask & (1u << (p - 1))) {
			h->portlist[h->nports++] = (uint8_t)p;
			h->mask |= (uint16_t)(((1u << r) - 1) << (r * (p - 1)));
		}
	h->format = fmt ? fmt : IW_FMT16;
	h->set_size = r * h->nports * format_width(h->format);
	h->ring_n = 0;
	if (h->link_ver >= 2 && h->c.ring_bytes > 0)
		h->ring_n = h->c.ring_bytes / (uint32_t)h->set_size;
}

static void ack_start(struct iw_hub *h, uint8_t seq, uint32_t rate, uint8_t fmt)
{
	uint8_t *b0 = begin(h, IW_ACK, seq), *b = b0;
	*b++ = IW_START;
	b = le32(b, rate);
	b = le16(b, h->mask);
	if (fmt != 0) {
		*b++ = h->format;
		*b++ = 0;
		b = le32(b, h->ring_n > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)h->ring_n);
	}
	put(h, (size_t)(b - b0));
}

/* --- commands ------------------------------------------------------------- */

static void handle(void *ctx, const struct iw_frame *f)
{
	struct iw_hub *h = ctx;
	const uint8_t *p = f->payload;
	uint64_t now = h->now;
	h->st.frames_in++;
	h->quiet = 0; /* the host spoke: answer it */
	if (f->type >= 0x80)
		return; /* a hub->host type: not addressed to the hub */
	if (h->c.protocol < 2 && (f->type == IW_LINK || f->type == IW_RESEND)) {
		h->st.bad_commands++;
		nak(h, f->seq, f->type, IW_NAK_UNKNOWN_COMMAND);
		return;
	}
	if (f->type == IW_RESEND && h->link_ver < 2) {
		h->st.bad_commands++;
		nak(h, f->seq, f->type, IW_NAK_NOT_NEGOTIATED);
		return;
	}
	int want = -1;
	switch (f->type) {
	case IW_IDENTIFY: case IW_STOP: case IW_READ_CAL: want = 0; break;
	case IW_START: want = h->link_ver >= 2 ? 8 : 6; break;
	case IW_SET_DEVSLP: case IW_PORT_POWER: want = 2; break;
	case IW_MARK: case IW_LINK: want = 4; break;
	case IW_RESEND: want = 12; break;
	}
	if ((want >= 0 && f->len != want) || (f->type == IW_PING && f->len > 32)) {
		h->st.bad_commands++;
		nak(h, f->seq, f->type, IW_NAK_BAD_LENGTH);
		return;
	}
	/* Samples before the command see the state before it. */
	render(h, now);
	switch (f->type) {
	case IW_IDENTIFY:
		identity(h, f->seq);
		break;
	case IW_READ_CAL:
		calibration(h, f->seq);
		break;
	case IW_LINK: {
		uint8_t ver = p[0];
		uint16_t mf = (uint16_t)(p[2] | p[3] << 8);
		if (ver < 1 || ver > h->c.protocol || mf < IW_MIN_MAX_FRAME || mf > IW_MAX_FRAME) {
			nak(h, f->seq, f->type, IW_NAK_BAD_VALUE);
			return;
		}
		if (h->streaming && ver != h->link_ver) {
			nak(h, f->seq, f->type, IW_NAK_STREAMING);
			return;
		}
		h->link_ver = ver;
		h->max_frame = IW_MAX_FRAME;
		if (ver >= 2)
			h->max_frame = mf < h->c.max_frame ? mf : h->c.max_frame;
		uint8_t *b0 = begin(h, IW_ACK, f->seq), *b = b0;
		*b++ = IW_LINK;
		*b++ = ver;
		*b++ = 0;
		b = le16(b, (uint16_t)h->max_frame);
		put(h, (size_t)(b - b0));
		break;
	}
	case IW_RESEND: {
		uint64_t first = rd64(p);
		uint32_t count = rd32(p + 8);
		if (count == 0 || first + count < first || first + count > h->next) {
			nak(h, f->seq, f->type, IW_NAK_NEVER_SENT);
		} else if (h->ring_n == 0) {
			nak(h, f->seq, f->type, IW_NAK_NO_RING);
		} else {
			resend(h, f->seq, first, count);
		}
		break;
	}
	case IW_PING: {
		uint8_t *b = begin(h, IW_ACK, f->seq);
		b[0] = IW_PING;
		memcpy(b + 1, p, f->len);
		put(h, 1u + f->len);
		break;
	}
	case IW_STOP:
		h->streaming = 0;
		ack0(h, f->seq, IW_STOP);
		break;
	case IW_START: {
		uint32_t rate = rd32(p);
		uint8_t mask = p[4], flags = p[5], fmt = f->len == 8 ? p[6] : 0;
		if (f->len == 8 && fmt == 0) {
			nak(h, f->seq, f->type, IW_NAK_BAD_FORMAT);
			return;
		}
		if ((flags & IW_START_RESUME) && h->streaming && rate == h->rate && mask == h->port_mask &&
		    (fmt == 0 || fmt == h->format)) {
			ack_start(h, f->seq, rate, fmt); /* a host back from a lost link: keep counting */
			return;
		}
		uint8_t r = check_start(h, rate, mask, fmt);
		if (r == 0) {
			start(h, rate, mask, fmt, now);
			if (sets_needed(h) > h->c.sets_cap || (packed(h) && (size_t)iw_pack_scratch(h->max_frame - 8, chans_of(h)) > h->c.z_cap) ||
			    largest_frame(h) > h->c.fb_cap) {
				h->streaming = 0;
				r = IW_NAK_BANDWIDTH; /* this build's buffers cannot carry the stream */
			}
		}
		if (r) {
			nak(h, f->seq, f->type, r);
			return;
		}
		ack_start(h, f->seq, rate, fmt);
		break;
	}
	case IW_SET_DEVSLP:
	case IW_PORT_POWER: {
		int port = p[0], v = p[1], dev = f->type == IW_SET_DEVSLP;
		if (port < 1 || port > h->c.ports) {
			nak(h, f->seq, f->type, IW_NAK_BAD_PORT);
			return;
		}
		if (v > 1) {
			nak(h, f->seq, f->type, IW_NAK_BAD_VALUE);
			return;
		}
		if (!(h->c.caps & (dev ? IW_CAP_DEVSLP : IW_CAP_PORT_POWER))) {
			nak(h, f->seq, f->type, IW_NAK_UNSUPPORTED);
			return;
		}
		uint64_t idx = next_index(h, now);
		if (dev) {
			if (h->p.devslp)
				h->p.devslp(h->p.ctx, port, v, idx);
		} else {
			h->powered[port - 1] = (uint8_t)v;
			if (h->p.power)
				h->p.power(h->p.ctx, port, v, idx);
		}
		ack0(h, f->seq, f->type);
		event(h, dev ? IW_EV_DEVSLP : IW_EV_PORT_POWER, (uint8_t)port, idx, (uint32_t)v);
		break;
	}
	case IW_MARK: {
		if (!h->streaming) {
			nak(h, f->seq, f->type, IW_NAK_NOT_STREAMING);
			return;
		}
		uint8_t *b0 = begin(h, IW_MARK_ECHO, f->seq), *b = b0;
		b = le32(b, rd32(p));
		b = le64(b, mark_index(h, now));
		put(h, (size_t)(b - b0));
		break;
	}
	default:
		h->st.bad_commands++;
		nak(h, f->seq, f->type, IW_NAK_UNKNOWN_COMMAND);
	}
}

/* --- the API -------------------------------------------------------------- */

int iw_hub_init(struct iw_hub *h, const struct iw_config *c, const struct iw_platform *p)
{
	memset(h, 0, sizeof *h);
	if (c->protocol < 1 || c->protocol > 3 || c->ports < 1 || c->ports > IW_MAX_PORTS || c->rails < 1 ||
	    c->rails > (c->protocol >= 3 ? 3 : 2) || c->ports * c->rails > IW_MAX_CHANS || c->nrates < 1 ||
	    c->nrates > IW_MAX_RATES || !p->read || !p->room || !p->write || !c->fb || c->fb_cap < 512 || !c->sets ||
	    !c->rxbuf || c->rx_cap < 48)
		return -1;
	if (c->protocol >= 2 && (c->max_frame < IW_MIN_MAX_FRAME || c->max_frame > IW_MAX_FRAME || !(c->formats & 1)))
		return -1;
	if (c->ring_bytes > 0 && !c->ring)
		return -1;
	h->c = *c;
	h->p = *p;
	h->link_ver = 1;
	h->max_frame = IW_MAX_FRAME;
	h->format = IW_FMT16;
	for (int i = 0; i < IW_MAX_PORTS; i++)
		h->powered[i] = 1;
	iw_parser_init(&h->rx, c->rxbuf, c->rx_cap, handle, h);
	return 0;
}

void iw_hub_rx(struct iw_hub *h, const uint8_t *b, size_t n, uint64_t now_ns)
{
	h->now = now_ns;
	iw_parser_feed(&h->rx, b, n, now_ns);
}

void iw_hub_poll(struct iw_hub *h, uint64_t now_ns)
{
	h->now = now_ns;
	iw_parser_poll(&h->rx, now_ns);
	render_blocks(h, now_ns, 1);
}

void iw_hub_reconnect(struct iw_hub *h) { h->quiet = 1; }
