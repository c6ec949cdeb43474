/* Sample format 3 (docs/hub-protocol.md, SAMPLES2 format 3): format 2's
 * values, delta/Rice coded per frame. */
#ifndef IW_PACK_H
#define IW_PACK_H

#include <stddef.h>
#include <stdint.h>

#define IW_PACK_MAX_CHANS 16

/* iw_pack writes at dst the payload of one SAMPLES2 frame of format 3
 * holding the first of n sample sets in sets (format 2's layout: per set,
 * per channel, bus u16 and a 20-bit current in 3 bytes), with header first,
 * mask and flags: as many sets as fit max_payload bytes, at least one. It
 * returns the payload's length and sets *used to the sets it packed.
 * zb and zi are scratch of at least (sets that fit) x chans words each:
 * iw_pack_scratch(max_payload, chans) tells how many. */
size_t iw_pack(uint8_t *dst, uint64_t first, uint16_t mask, uint8_t flags, const uint8_t *sets, int n,
	       int max_payload, uint32_t *zb, uint32_t *zi, int *used);
int iw_pack_scratch(int max_payload, int chans);

#endif
