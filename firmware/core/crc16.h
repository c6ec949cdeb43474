/* CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, not reflected, xorout 0;
 * check value over "123456789" 0x29B1 (docs/hub-protocol.md, Framing). */
#ifndef IW_CRC16_H
#define IW_CRC16_H

#include <stddef.h>
#include <stdint.h>

uint16_t iw_crc16(uint16_t crc, const uint8_t *p, size_t n);
#define IW_CRC16_INIT 0xFFFFu

#endif
