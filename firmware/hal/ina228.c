#include "ina228.h"

/* 1e12 / 13107.2e6 x 1e6 = 76 293 945.3125: pA x uOhm per SHUNT_CAL count. */
#define PA_UOHM_PER_CAL_X4 305175781ull /* x4 to keep the .25 */

uint16_t ina228_shunt_cal(uint32_t lsb_pa, uint32_t shunt_uohm)
{
	/* cal = 13107.2e6 x lsb_pa e-12 x shunt_uohm e-6 = lsb_pa x shunt_uohm x 13107.2 / 1e12 */
	uint64_t num = (uint64_t)lsb_pa * shunt_uohm * 131072u; /* x 1e5 scale: 13107.2 = 131072 / 10 */
	uint64_t den = 10000000000000ull;                        /* 1e12 x 10 */
	uint64_t cal = (num + den / 2) / den;
	return cal > 0x7FFF ? 0 : (uint16_t)cal;
}

uint32_t ina228_lsb_pa(uint16_t shunt_cal, uint32_t shunt_uohm)
{
	if (shunt_uohm == 0)
		return 0;
	uint64_t num = (uint64_t)shunt_cal * PA_UOHM_PER_CAL_X4;
	return (uint32_t)((num + 2u * shunt_uohm) / (4u * (uint64_t)shunt_uohm));
}

int32_t ina228_cur20(const uint8_t b[3])
{
	uint32_t raw = (uint32_t)b[0] << 16 | (uint32_t)b[1] << 8 | b[2];
	return (int32_t)(raw << 8) >> 12;
}

uint16_t ina228_vbus_1250(const uint8_t b[3])
{
	uint32_t raw = ((uint32_t)b[0] << 16 | (uint32_t)b[1] << 8 | b[2]) >> 4;
	/* 195.3125 uV = 1250 uV x 5/32 */
	uint32_t c = (raw * 5u + 16u) / 32u;
	return c > 0xFFFF ? 0xFFFF : (uint16_t)c;
}

int ina228_init(struct ina228 *d, const struct ina228_bus *bus, uint8_t addr, uint32_t shunt_uohm, uint32_t lsb_pa,
		unsigned ct, unsigned avg)
{
	uint8_t b[2];
	d->bus = bus;
	d->addr = addr;
	d->shunt_uohm = shunt_uohm;
	if (bus->read_reg(bus->ctx, addr, INA228_MANUFACTURER_ID, b, 2))
		return -1;
	if (b[0] != 'T' || b[1] != 'I')
		return -2;
	if (bus->read_reg(bus->ctx, addr, INA228_DEVICE_ID, b, 2))
		return -1;
	d->device_id = (uint16_t)(b[0] << 8 | b[1]);
	if ((d->device_id >> 4) != 0x228 && (d->device_id >> 4) != 0x229)
		return -2;
	if (bus->write_reg(bus->ctx, addr, INA228_CONFIG, 0x8000)) /* RST */
		return -1;
	d->shunt_cal = ina228_shunt_cal(lsb_pa, shunt_uohm);
	if (d->shunt_cal == 0)
		return -3;
	d->lsb_pa = ina228_lsb_pa(d->shunt_cal, shunt_uohm);
	ct &= 7;
	avg &= 7;
	/* MODE 0xB: continuous shunt and bus voltage; VBUSCT, VSHCT = ct; VTCT 0; AVG. */
	uint16_t adc = (uint16_t)(0xB000u | ct << 9 | ct << 6 | avg);
	if (bus->write_reg(bus->ctx, addr, INA228_SHUNT_CAL, d->shunt_cal) || bus->write_reg(bus->ctx, addr, INA228_ADC_CONFIG, adc))
		return -1;
	return 0;
}

int ina228_read(struct ina228 *d, uint16_t *bus_1250uv, int32_t *cur20)
{
	uint8_t v[3], c[3];
	if (d->bus->read_reg(d->bus->ctx, d->addr, INA228_VBUS, v, 3) || d->bus->read_reg(d->bus->ctx, d->addr, INA228_CURRENT, c, 3))
		return -1;
	*bus_1250uv = ina228_vbus_1250(v);
	*cur20 = ina228_cur20(c);
	return 0;
}
