/* Framing: building frames, and the receiver's resynchronising parser
 * (docs/hub-protocol.md, Framing). */
#ifndef IW_FRAME_H
#define IW_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/* iw_frame_begin writes the header of a frame of type t and sequence seq
 * at buf and returns where the payload starts (buf + 6). iw_frame_finish
 * sets the length for a payload of n bytes, appends the CRC and returns the
 * whole frame's length (n + 8). buf must hold n + 8 bytes. */
uint8_t *iw_frame_begin(uint8_t *buf, uint8_t t, uint8_t seq);
size_t iw_frame_finish(uint8_t *buf, size_t n);

/* A received, CRC-checked frame. payload aliases the parser's buffer and is
 * valid only during the callback. */
struct iw_frame {
	uint8_t type, seq;
	uint16_t len;
	const uint8_t *payload;
};

typedef void (*iw_frame_fn)(void *ctx, const struct iw_frame *f);

/* The parser keeps at most cap bytes: a frame longer than that (its length
 * field beyond cap - 8) is treated as a bad length and resynchronised
 * past, exactly as one beyond 4088. Every byte is hostile: nothing a
 * sender does makes it read outside buf or stall for more than idle_ns
 * without a byte. */
struct iw_parser {
	uint8_t *buf;
	size_t cap, len;
	uint64_t last_ns;  /* when the last byte arrived */
	uint64_t idle_ns;  /* an incomplete frame is given up after this long without a byte */
	uint32_t discarded, resyncs, crc_errors, good;
	int discarding;
	iw_frame_fn fn;
	void *ctx;
};

void iw_parser_init(struct iw_parser *p, uint8_t *buf, size_t cap, iw_frame_fn fn, void *ctx);
/* iw_parser_feed takes n received bytes at time now_ns. */
void iw_parser_feed(struct iw_parser *p, const uint8_t *b, size_t n, uint64_t now_ns);
/* iw_parser_poll gives up an incomplete frame idle for idle_ns (call it
 * from the main loop even when no byte arrives). */
void iw_parser_poll(struct iw_parser *p, uint64_t now_ns);

#endif
