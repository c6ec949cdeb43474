#include "crc16.h"

/* Table-driven, one byte a step: the table is built by the bitwise
 * reference of the spec, once, at first use (256 x 2 bytes of RAM; a
 * const table would sit in flash instead, at the same cost). */
static uint16_t table[256];
static int table_ready;

static void build(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint16_t c = (uint16_t)(i << 8);
		for (int b = 0; b < 8; b++)
			c = (c & 0x8000u) ? (uint16_t)((uint16_t)(c << 1) ^ 0x1021u) : (uint16_t)(c << 1);
		table[i] = c;
	}
	table_ready = 1;
}

uint16_t iw_crc16(uint16_t crc, const uint8_t *p, size_t n)
{
	if (!table_ready)
		build();
	while (n--)
		crc = (uint16_t)((uint16_t)(crc << 8) ^ table[(uint8_t)((crc >> 8) ^ *p++)]);
	return crc;
}
