#include "pack.h"

/* A port of meter/hub/packed.go's Packer: the choice of parameters and the
 * number of sets per frame are the same, so the frames are byte for byte
 * those of idlewatt's emulator (test/golden). */

enum {
	HDR2 = 14,      /* SAMPLES2 header */
	CHAN_HDR = 6,   /* per channel: bus u16, current 3 bytes, k byte */
	ESCAPE = 16,    /* a Rice quotient of 16 or more is sent raw after 16 zero bits */
	BUS_RAW = 17,
	CUR_RAW = 21,
	MAX_KBUS = 7,
	MAX_KCUR = 20,
	MIN_BITS = 2,
};

static uint32_t zig(int32_t d) { return ((uint32_t)d << 1) ^ (uint32_t)(d >> 31); }

static int32_t cur20(const uint8_t *q)
{
	uint32_t u = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16;
	return (int32_t)(u << 8) >> 8;
}

static int rice_len(uint32_t u, unsigned k, int raw)
{
	uint32_t q = u >> k;
	return q < ESCAPE ? (int)q + 1 + (int)k : ESCAPE + raw;
}

static unsigned best_k(const uint32_t *z, int j, int chans, int s, unsigned maxk, int raw)
{
	unsigned best = 0;
	long best_cost = -1;
	for (unsigned k = 0; k <= maxk; k++) {
		long c = 0;
		for (int x = 1; x < s; x++)
			c += rice_len(z[(x - 1) * chans + j], k, raw);
		if (best_cost < 0 || c < best_cost) {
			best = k;
			best_cost = c;
		}
	}
	return best;
}

struct bits {
	uint8_t *dst;
	size_t n;
	uint64_t acc;
	unsigned nacc;
};

static void put(struct bits *w, uint32_t v, unsigned n)
{
	w->acc = w->acc << n | ((uint64_t)v & ((1ull << n) - 1));
	w->nacc += n;
	while (w->nacc >= 8) {
		w->nacc -= 8;
		w->dst[w->n++] = (uint8_t)(w->acc >> w->nacc);
	}
}

static void rice(struct bits *w, uint32_t u, unsigned k, int raw)
{
	uint32_t q = u >> k;
	if (q < ESCAPE) {
		put(w, 0, q);
		put(w, 1, 1);
		put(w, u, k);
		return;
	}
	put(w, 0, ESCAPE);
	put(w, u, (unsigned)raw);
}

int iw_pack_scratch(int max_payload, int chans)
{
	int budget = (max_payload - HDR2 - chans * CHAN_HDR) * 8;
	if (budget < 0)
		budget = 0;
	return (budget / (MIN_BITS * chans)) * chans;
}

size_t iw_pack(uint8_t *dst, uint64_t first, uint16_t mask, uint8_t flags, const uint8_t *sets, int n,
	       int max_payload, uint32_t *zb, uint32_t *zi, int *used)
{
	int chans = 0;
	for (uint16_t m = mask; m; m &= (uint16_t)(m - 1))
		chans++;
	*used = 0;
	if (chans == 0 || n < 1)
		return 0;
	long budget = (long)(max_payload - HDR2 - chans * CHAN_HDR) * 8;
	long most = 1 + (budget > 0 ? budget : 0) / (MIN_BITS * chans);
	if (n > 0xFFFF)
		n = 0xFFFF;
	if (n > most)
		n = (int)most;
	int stride = chans * 5;
	for (int k = 1; k < n; k++)
		for (int j = 0; j < chans; j++) {
			const uint8_t *a = sets + (k - 1) * stride + j * 5, *b = sets + k * stride + j * 5;
			int32_t da = (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8) - (int32_t)((uint32_t)a[0] | (uint32_t)a[1] << 8);
			zb[(k - 1) * chans + j] = zig(da);
			zi[(k - 1) * chans + j] = zig(cur20(b + 2) - cur20(a + 2));
		}
	unsigned kb[IW_PACK_MAX_CHANS], ki[IW_PACK_MAX_CHANS];
	/* Parameters for all n sets, then as many sets as fit with them; the
	 * parameters chosen again for those sets can only shorten them. */
	for (int j = 0; j < chans; j++) {
		kb[j] = best_k(zb, j, chans, n, MAX_KBUS, BUS_RAW);
		ki[j] = best_k(zi, j, chans, n, MAX_KCUR, CUR_RAW);
	}
	int s = 1;
	long usedbits = 0;
	for (; s < n; s++) {
		long c = 0;
		for (int j = 0; j < chans; j++)
			c += rice_len(zb[(s - 1) * chans + j], kb[j], BUS_RAW) + rice_len(zi[(s - 1) * chans + j], ki[j], CUR_RAW);
		if (usedbits + c > budget)
			break;
		usedbits += c;
	}
	for (int j = 0; j < chans; j++) {
		kb[j] = best_k(zb, j, chans, s, MAX_KBUS, BUS_RAW);
		ki[j] = best_k(zi, j, chans, s, MAX_KCUR, CUR_RAW);
	}
	size_t o = 0;
	for (int i = 0; i < 8; i++)
		dst[o++] = (uint8_t)(first >> (8 * i));
	dst[o++] = (uint8_t)mask;
	dst[o++] = (uint8_t)(mask >> 8);
	dst[o++] = (uint8_t)s;
	dst[o++] = (uint8_t)(s >> 8);
	dst[o++] = flags;
	dst[o++] = 3;
	for (int j = 0; j < chans; j++) {
		const uint8_t *q = sets + j * 5;
		for (int i = 0; i < 5; i++)
			dst[o++] = q[i];
		dst[o++] = (uint8_t)(kb[j] | ki[j] << 3);
	}
	struct bits w = { dst, o, 0, 0 };
	for (int k = 1; k < s; k++)
		for (int j = 0; j < chans; j++) {
			rice(&w, zb[(k - 1) * chans + j], kb[j], BUS_RAW);
			rice(&w, zi[(k - 1) * chans + j], ki[j], CUR_RAW);
		}
	if (w.nacc > 0)
		w.dst[w.n++] = (uint8_t)(w.acc << (8 - w.nacc));
	*used = s;
	return w.n;
}
