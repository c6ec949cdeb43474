/* The idlewatt hub protocol, versions 1-3: constants (docs/hub-protocol.md). */
#ifndef IW_PROTO_H
#define IW_PROTO_H

#include <stdint.h>

#define IW_START0 0xA5u
#define IW_START1 0x5Au
#define IW_HEADER_LEN 6u   /* start(2) type(1) seq(1) length(2) */
#define IW_TRAILER_LEN 2u  /* CRC-16, most significant byte first */
#define IW_MAX_PAYLOAD 4088u
#define IW_MAX_FRAME (IW_HEADER_LEN + IW_MAX_PAYLOAD + IW_TRAILER_LEN)
#define IW_MIN_MAX_FRAME 64u
#define IW_DEFAULT_MAX_FRAME 256u

/* host -> hub */
enum {
	IW_IDENTIFY = 0x01, IW_START = 0x02, IW_STOP = 0x03, IW_SET_DEVSLP = 0x04,
	IW_PORT_POWER = 0x05, IW_MARK = 0x06, IW_READ_CAL = 0x07, IW_PING = 0x08,
	IW_LINK = 0x09, IW_RESEND = 0x0A,
};
/* hub -> host */
enum {
	IW_ACK = 0x80, IW_NAK = 0x81, IW_IDENTITY = 0x82, IW_CALIBRATION = 0x83,
	IW_SAMPLES = 0x84, IW_MARK_ECHO = 0x85, IW_EVENT = 0x86, IW_SAMPLES2 = 0x87,
	IW_EXPIRED = 0x88,
};
/* NAK reasons */
enum {
	IW_NAK_UNKNOWN_COMMAND = 1, IW_NAK_BAD_LENGTH = 2, IW_NAK_BAD_PORT = 3,
	IW_NAK_BAD_RATE = 4, IW_NAK_BANDWIDTH = 5, IW_NAK_STREAMING = 6,
	IW_NAK_NOT_STREAMING = 7, IW_NAK_BAD_VALUE = 8, IW_NAK_UNSUPPORTED = 9,
	IW_NAK_NOT_NEGOTIATED = 10, IW_NAK_NEVER_SENT = 11, IW_NAK_NO_RING = 12,
	IW_NAK_BAD_FORMAT = 13,
};
/* EVENT kinds */
enum { IW_EV_DEVSLP = 1, IW_EV_PORT_POWER = 2, IW_EV_OVER_CURRENT = 3, IW_EV_OVERRUN = 4 };
/* IDENTITY capabilities */
enum { IW_CAP_DEVSLP = 1, IW_CAP_PORT_POWER = 2, IW_CAP_MARKS = 4 };
/* sample formats */
enum { IW_FMT16 = 1, IW_FMT20 = 2, IW_FMT_PACKED = 3 };
/* rail ids */
enum { IW_RAIL_5V = 1, IW_RAIL_12V = 2, IW_RAIL_3V3 = 3 };

#define IW_START_RESUME 0x01u
#define IW_SAMPLES_RESENT 0x01u
#define IW_BLOCK_DIVISOR 100u /* a block is rate/100 samples: 10 ms */
#define IW_LINK_HEADROOM_NUM 9u /* a stream may use 9/10 of the link */
#define IW_LINK_HEADROOM_DEN 10u

#endif
