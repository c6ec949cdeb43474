/* The hub's protocol core: commands in, frames out, samples on a schedule.
 * Portable C11, no allocation: the platform gives every buffer. The same
 * core runs on the host (host/hubsim, a pseudo-terminal) and on a Cortex-M
 * (arm/). docs/firmware.md describes it; docs/hub-protocol.md is the wire. */
#ifndef IW_HUB_H
#define IW_HUB_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "proto.h"

#define IW_MAX_PORTS 8
#define IW_MAX_RAILS 3
#define IW_MAX_CHANS 16
#define IW_MAX_RATES 16

struct iw_rail {
	uint8_t id;            /* IW_RAIL_5V, IW_RAIL_12V, IW_RAIL_3V3 */
	uint16_t max_mv;       /* full-scale bus voltage */
	uint32_t lsb_na;       /* nominal 16-bit current LSB, nA */
	uint32_t wide_lsb_pa;  /* nominal 20-bit current LSB, pA (0: no format 2) */
};

struct iw_cal {
	uint16_t cal_reg;      /* the sensor's calibration register (INA226 CAL / INA228 SHUNT_CAL) */
	uint32_t shunt_uohm;
	uint32_t lsb_na;       /* this channel's 16-bit current LSB */
	uint32_t wide_lsb_pa;  /* this channel's 20-bit current LSB */
};

/* The platform: where samples come from, where DEVSLP and power go, where
 * bytes leave. Every callback is called from iw_hub_rx/iw_hub_poll. */
struct iw_platform {
	void *ctx;
	/* read fills the counts of channel ch (c = (port-1) x rails + rail) for
	 * sample index idx, in the stream's format fmt: IW_FMT16 gives a 16-bit
	 * current count in *cur, IW_FMT20 (and packed) a 20-bit one. Returns
	 * nonzero if the current was clamped (an OVER_CURRENT), *over_ua its
	 * value. Called in index order, every channel of a set in turn. */
	int (*read)(void *ctx, uint64_t idx, int ch, int fmt, uint16_t *bus, int32_t *cur, uint32_t *over_ua);
	void (*devslp)(void *ctx, int port, int asserted, uint64_t idx);
	void (*power)(void *ctx, int port, int on, uint64_t idx);
	/* room is how many bytes the link's queue takes now; write queues n
	 * bytes (never more than room said). A frame is written whole or not
	 * at all. */
	size_t (*room)(void *ctx);
	void (*write)(void *ctx, const uint8_t *b, size_t n);
};

struct iw_config {
	uint8_t protocol;      /* highest version spoken: 1, 2 or 3 */
	uint8_t ports, rails;
	struct iw_rail rail[IW_MAX_RAILS];
	uint8_t nrates;
	uint32_t rates[IW_MAX_RATES];
	uint8_t caps;
	uint16_t bus_lsb_uv;
	uint32_t link_bytes_sec;
	const char *model, *firmware, *serial;
	uint16_t max_frame;    /* v2: the largest frame sent or taken */
	uint8_t formats;       /* v2: bit 0 format 1, bit 1 format 2, bit 2 packed */
	struct iw_cal cal[IW_MAX_CHANS];
	/* Buffers the platform owns. */
	uint8_t *ring;         /* v2 ring of recent sample sets; ring_bytes 0: none */
	uint32_t ring_bytes;
	uint8_t *sets;         /* one block's sample sets: >= rate/100 x chans x 5 */
	size_t sets_cap;
	uint8_t *fb;           /* frame scratch: >= the largest frame sent (v1: 4096) */
	size_t fb_cap;
	uint32_t *zb, *zi;     /* packing scratch: iw_pack_scratch(max_frame - 8, chans) words each */
	size_t z_cap;
	uint8_t *rxbuf;        /* the command parser's buffer (>= 48 bytes: PING's 32 + 8 + slack) */
	size_t rx_cap;
};

struct iw_stats {
	uint32_t frames_in, bad_commands, naks, blocks, lost_samples, overruns, resends;
};

struct iw_hub {
	struct iw_config c;
	struct iw_platform p;
	struct iw_parser rx;
	struct iw_stats st;
	uint64_t now;          /* ns, the platform's clock */
	int link_ver, quiet;
	int max_frame;
	int streaming;
	uint32_t rate;
	uint16_t mask;
	uint8_t port_mask, format, nports, portlist[IW_MAX_PORTS];
	uint64_t next, e0;
	uint64_t ring_n;
	int set_size;
	uint8_t useq;
	uint8_t powered[IW_MAX_PORTS];
	uint64_t lost_first, lost_count;
};

/* iw_hub_init checks c and starts the hub idle; nonzero on a config that
 * breaks the protocol's bounds. */
int iw_hub_init(struct iw_hub *h, const struct iw_config *c, const struct iw_platform *p);
/* iw_hub_rx takes bytes from the host received at now_ns. */
void iw_hub_rx(struct iw_hub *h, const uint8_t *b, size_t n, uint64_t now_ns);
/* iw_hub_poll takes every sample due by now_ns and sends what fits. */
void iw_hub_poll(struct iw_hub *h, uint64_t now_ns);
/* iw_hub_reconnect: the host went and came back (USB re-enumeration):
 * send nothing until its first frame; the ring keeps counting. */
void iw_hub_reconnect(struct iw_hub *h);

/* Bandwidth (docs/hub-protocol.md, Bandwidth): bytes/s of a stream. */
double iw_stream_bytes(uint32_t rate, int chans);
double iw_stream_bytes2(uint32_t rate, int chans, int fmt, int max_frame);

#endif
