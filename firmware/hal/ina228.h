/* TI INA228 (I2C) / INA229 (SPI): 20-bit current, shunt and bus-voltage
 * monitor (TI SBOS938, INA228 datasheet, section 7.6 register map). One
 * sensor per rail. The bus is abstract: the board gives register reads and
 * writes over I2C or SPI. */
#ifndef IW_INA228_H
#define IW_INA228_H

#include <stdint.h>

/* Registers (datasheet 7.6). */
enum {
	INA228_CONFIG = 0x00, INA228_ADC_CONFIG = 0x01, INA228_SHUNT_CAL = 0x02,
	INA228_VSHUNT = 0x04, INA228_VBUS = 0x05, INA228_DIETEMP = 0x06,
	INA228_CURRENT = 0x07, INA228_DIAG_ALRT = 0x0B,
	INA228_MANUFACTURER_ID = 0x3E, INA228_DEVICE_ID = 0x3F,
};

struct ina228_bus {
	void *ctx;
	/* read_reg reads n (2, 3 or 5) bytes of register reg of the device at
	 * addr, most significant byte first; write_reg writes a 16-bit
	 * register. Nonzero on a bus error. */
	int (*read_reg)(void *ctx, uint8_t addr, uint8_t reg, uint8_t *b, int n);
	int (*write_reg)(void *ctx, uint8_t addr, uint8_t reg, uint16_t v);
};

struct ina228 {
	const struct ina228_bus *bus;
	uint8_t addr;         /* I2C address 0x40-0x4F (A0/A1 strapping); a chip select for INA229 */
	uint32_t shunt_uohm;
	uint16_t shunt_cal;   /* SHUNT_CAL written */
	uint32_t lsb_pa;      /* the current LSB SHUNT_CAL gives, pA per count */
	uint16_t device_id;
};

/* ina228_init checks the part (MANUFACTURER_ID "TI", DEVICE_ID 0x228 or
 * 0x229), resets it, sets continuous bus and shunt conversions with the
 * given conversion-time code (0 = 50 us ... 7 = 4120 us) and averaging code
 * (0 = 1 ... 7 = 1024), and SHUNT_CAL for a current LSB of about lsb_pa
 * (ADCRANGE 0: +-163.84 mV). Returns 0, or -1 on a bus error, -2 if the part
 * is not an INA228/INA229, -3 if the LSB cannot be had with this shunt. */
int ina228_init(struct ina228 *d, const struct ina228_bus *bus, uint8_t addr, uint32_t shunt_uohm, uint32_t lsb_pa,
		unsigned ct, unsigned avg);

/* ina228_shunt_cal is SHUNT_CAL = 13107.2e6 x CURRENT_LSB x R_SHUNT
 * (datasheet eq. 2, ADCRANGE 0), rounded; ina228_lsb_pa the LSB a
 * SHUNT_CAL value gives. */
uint16_t ina228_shunt_cal(uint32_t lsb_pa, uint32_t shunt_uohm);
uint32_t ina228_lsb_pa(uint16_t shunt_cal, uint32_t shunt_uohm);

/* ina228_read reads the latest conversion: the bus voltage in the
 * protocol's 1.25 mV counts and the current in 20-bit counts of lsb_pa. */
int ina228_read(struct ina228 *d, uint16_t *bus_1250uv, int32_t *cur20);

/* ina228_cur20 and ina228_vbus decode the 24-bit registers (values in bits
 * 23:4): CURRENT two's complement, VBUS unsigned at 195.3125 uV. */
int32_t ina228_cur20(const uint8_t b[3]);
uint16_t ina228_vbus_1250(const uint8_t b[3]);

#endif
