/* The hub firmware on an STM32F405 (Cortex-M4).
 *
 * BOARD_QEMU: QEMU's netduinoplus2 machine. USART1 is QEMU's first serial
 * port (-serial pty); there is no INA228 to read, so each port's samples
 * come from the synthetic drive (sim/drive.c). QEMU does not model the RCC,
 * so the clock is left as QEMU runs it (168 MHz).
 *
 * BOARD_FEATHER: the Adafruit Feather STM32F405 Express (12 MHz crystal):
 * PLL to 168 MHz, USART3 on the TX/RX pins (PB10/PB11) at 921,600 baud to a
 * USB-serial bridge, two INA228 per port on I2C1 (SCL PB6, SDA PB7), the
 * DEVSLP line of port p on PC(5+p) (docs/firmware.md, Wiring). */
#include <stdint.h>
#include <string.h>

#include "../core/hub.h"
#include "../core/pack.h"
#include "stm32f4.h"
#ifdef BOARD_QEMU
#include "../sim/drive.h"
#else
#include "../hal/ina228.h"
#endif

#define PORTS 2
#define RAILS 2
#define CHANS (PORTS * RAILS)
#define MAX_FRAME 256

#ifdef BOARD_QEMU
#define UART USART1_BASE
#define CPU_HZ 168000000u
#else
#define UART 0x40004800u /* USART3 */
#define CPU_HZ 168000000u
#endif

static uint8_t ring[16 << 10];
static uint8_t sets[6 << 10];
static uint8_t fb[2048];
static uint8_t rxbuf[64];
static uint32_t zb[1024], zi[1024];
static uint8_t txq[8 << 10];
static size_t tx_head, tx_used;

void SysTick_Handler(void) {}

/* The sample clock is TIM2, free-running at 1 MHz (32 bits, extended here
 * to 64 by counting its wraps; now_ns runs often enough to see each one).
 * Not SysTick's interrupts: an interrupt taken late (QEMU on a loaded host)
 * would lose time, a counter read does not. */
#define TIM2_BASE 0x40000000u
#define TIM_CR1 REG(TIM2_BASE + 0x00)
#define TIM_EGR REG(TIM2_BASE + 0x14)
#define TIM_CNT REG(TIM2_BASE + 0x24)
#define TIM_PSC REG(TIM2_BASE + 0x28)
#define TIM_ARR REG(TIM2_BASE + 0x2C)
#ifdef BOARD_QEMU
#define TIM_PSC_1MHZ 999u /* QEMU clocks its STM32 timers at 1 GHz */
#else
#define TIM_PSC_1MHZ 83u /* APB1 timer clock 84 MHz */
#endif

static uint32_t tim_last, tim_wraps;

static void clock_init(void)
{
	RCC_APB1ENR |= 1u << 0; /* TIM2 */
	TIM_PSC = TIM_PSC_1MHZ;
	TIM_ARR = 0xFFFFFFFFu;
	TIM_EGR = 1; /* load the prescaler */
	TIM_CR1 = 1; /* CEN */
}

static uint64_t now_ns(void)
{
	uint32_t c = TIM_CNT;
	if (c < tim_last)
		tim_wraps++;
	tim_last = c;
	return ((uint64_t)tim_wraps << 32 | c) * 1000u;
}

static size_t room(void *ctx)
{
	(void)ctx;
	return sizeof txq - tx_used;
}

static void write(void *ctx, const uint8_t *b, size_t n)
{
	(void)ctx;
	for (size_t i = 0; i < n; i++) {
		txq[(tx_head + tx_used) % sizeof txq] = b[i];
		tx_used++;
	}
}

static void drain(void)
{
	while (tx_used > 0 && (USART_SR(UART) & USART_SR_TXE)) {
		USART_DR(UART) = txq[tx_head];
		tx_head = (tx_head + 1) % sizeof txq;
		tx_used--;
	}
}

static void devslp_pin(int port, int asserted)
{
	/* PC6, PC7 drive each port's open-drain buffer (docs/firmware.md,
	 * DEVSLP): GPIO high releases the buffer, the pull-up takes P3 to
	 * 3.3 V, DEVSLP asserted; GPIO low pulls P3 low, released. */
	uint32_t bit = 1u << (5 + port);
	GPIO_BSRR(GPIOC_BASE) = asserted ? bit : bit << 16;
}

#ifdef BOARD_QEMU
static struct iw_simdrive drive[PORTS];
static uint32_t stream_rate = 1000;

static int read(void *ctx, uint64_t idx, int ch, int fmt, uint16_t *bus, int32_t *cur, uint32_t *over)
{
	(void)ctx;
	(void)over;
	int port = ch / RAILS, rail = ch % RAILS;
	struct iw_simdrive *d = &drive[port];
	int64_t ua = rail == 0 ? iw_simdrive_current(d, idx, stream_rate) : iw_simdrive_noise(d, 200);
	*bus = (uint16_t)((rail == 0 ? 4000 : 9600) + iw_simdrive_noise(d, 1));
	int64_t lsb = fmt == IW_FMT16 ? (rail == 0 ? 50000000 : 100000000) : (rail == 0 ? 8000000 : 10000000);
	*cur = (int32_t)((ua * 1000000 + (ua >= 0 ? lsb / 2 : -lsb / 2)) / lsb);
	return 0;
}

static void devslp(void *ctx, int port, int asserted, uint64_t idx)
{
	(void)ctx;
	devslp_pin(port, asserted);
	iw_simdrive_pin(&drive[port - 1], asserted, idx);
}

static void board_init(void) {}
#else
/* I2C1, polling, 400 kHz (APB1 42 MHz). */
static int i2c_wait(uint32_t flag)
{
	for (uint32_t n = 0; n < 100000u; n++) {
		uint32_t sr = I2C_SR1(I2C1_BASE);
		if (sr & (1u << 10)) { /* AF: no acknowledge */
			I2C_SR1(I2C1_BASE) = ~(1u << 10);
			I2C_CR1(I2C1_BASE) |= 1u << 9; /* STOP */
			return -1;
		}
		if (sr & flag)
			return 0;
	}
	return -1;
}

static int i2c_start(uint8_t addr, int rd)
{
	I2C_CR1(I2C1_BASE) |= 1u << 8; /* START */
	if (i2c_wait(1u << 0))          /* SB */
		return -1;
	I2C_DR(I2C1_BASE) = (uint32_t)(addr << 1 | (rd ? 1 : 0));
	if (i2c_wait(1u << 1)) /* ADDR */
		return -1;
	(void)I2C_SR2(I2C1_BASE);
	return 0;
}

static int i2c_read_reg(void *ctx, uint8_t addr, uint8_t reg, uint8_t *b, int n)
{
	(void)ctx;
	if (i2c_start(addr, 0))
		return -1;
	I2C_DR(I2C1_BASE) = reg;
	if (i2c_wait(1u << 7)) /* TXE */
		return -1;
	I2C_CR1(I2C1_BASE) |= 1u << 10; /* ACK */
	if (i2c_start(addr, 1))
		return -1;
	for (int i = 0; i < n; i++) {
		if (i == n - 1) {
			I2C_CR1(I2C1_BASE) &= ~(1u << 10);
			I2C_CR1(I2C1_BASE) |= 1u << 9; /* STOP after the last byte */
		}
		if (i2c_wait(1u << 6)) /* RXNE */
			return -1;
		b[i] = (uint8_t)I2C_DR(I2C1_BASE);
	}
	return 0;
}

static int i2c_write_reg(void *ctx, uint8_t addr, uint8_t reg, uint16_t v)
{
	(void)ctx;
	if (i2c_start(addr, 0))
		return -1;
	uint8_t b[3] = { reg, (uint8_t)(v >> 8), (uint8_t)v };
	for (int i = 0; i < 3; i++) {
		I2C_DR(I2C1_BASE) = b[i];
		if (i2c_wait(1u << 7))
			return -1;
	}
	if (i2c_wait(1u << 2)) /* BTF */
		return -1;
	I2C_CR1(I2C1_BASE) |= 1u << 9;
	return 0;
}

static const struct ina228_bus i2c = { 0, i2c_read_reg, i2c_write_reg };
static struct ina228 sensor[CHANS];

/* Samples are read from the sensors when due (sample_due, from the main
 * loop, as soon as the index is reached) into a FIFO the core reads from
 * when it sends a block. */
#define FIFO 64
static struct {
	uint64_t idx;
	uint16_t bus[CHANS];
	int32_t cur[CHANS];
} fifo[FIFO];
static uint64_t sampled; /* next index to read from the sensors */

static void sample_due(const struct iw_hub *h, uint64_t now)
{
	if (!h->streaming) {
		sampled = 0;
		return;
	}
	uint64_t d = now > h->e0 ? now - h->e0 : 0;
	uint64_t due = d / 1000000000u * h->rate + d % 1000000000u * h->rate / 1000000000u;
	if (due > sampled + FIFO)
		sampled = due - FIFO / 2; /* fell behind: the core reads zeros for the samples missed */
	for (; sampled < due; sampled++) {
		int k = (int)(sampled % FIFO);
		fifo[k].idx = sampled;
		for (int ch = 0; ch < CHANS; ch++)
			if (ina228_read(&sensor[ch], &fifo[k].bus[ch], &fifo[k].cur[ch]) != 0)
				fifo[k].bus[ch] = 0, fifo[k].cur[ch] = 0;
	}
}

static int read(void *ctx, uint64_t idx, int ch, int fmt, uint16_t *bus, int32_t *cur, uint32_t *over)
{
	(void)ctx;
	(void)over;
	int32_t c20 = 0;
	int k = (int)(idx % FIFO);
	*bus = 0;
	if (fifo[k].idx == idx) {
		*bus = fifo[k].bus[ch];
		c20 = fifo[k].cur[ch];
	}
	/* Format 1's LSB is 16 of the 20-bit ones: the same reading, coarser. */
	*cur = fmt == IW_FMT16 ? (c20 >= 0 ? (c20 + 8) >> 4 : -((-c20 + 8) >> 4)) : c20;
	return 0;
}

static void devslp(void *ctx, int port, int asserted, uint64_t idx)
{
	(void)ctx;
	(void)idx;
	devslp_pin(port, asserted);
}

static void board_init(void)
{
	/* HSE 12 MHz -> PLL: M 12, N 336, P 2 (168 MHz), Q 7; APB1 /4, APB2 /2. */
	RCC_CR |= 1u << 16; /* HSEON */
	for (uint32_t n = 0; n < 1000000u && !(RCC_CR & (1u << 17)); n++) {
	}
	FLASH_ACR = 0x705u; /* 5 wait states, caches, prefetch */
	RCC_PLLCFGR = 12u | 336u << 6 | 0u << 16 | 1u << 22 | 7u << 24;
	RCC_CR |= 1u << 24; /* PLLON */
	for (uint32_t n = 0; n < 1000000u && !(RCC_CR & (1u << 25)); n++) {
	}
	RCC_CFGR = 5u << 10 | 4u << 13 | 2u; /* PPRE1 /4, PPRE2 /2, SW PLL */
	RCC_AHB1ENR |= 1u << 1 | 1u << 2;    /* GPIOB, GPIOC */
	RCC_APB1ENR |= 1u << 18 | 1u << 21;  /* USART3, I2C1 */
	/* PB10/PB11 AF7 (USART3), PB6/PB7 AF4 open-drain (I2C1), PC6/PC7 outputs. */
	GPIO_MODER(GPIOB_BASE) = (GPIO_MODER(GPIOB_BASE) & ~(0xFu << 20 | 0xFu << 12)) | 0xAu << 20 | 0xAu << 12;
	GPIO_AFRH(GPIOB_BASE) = (GPIO_AFRH(GPIOB_BASE) & ~0xFF00u) | 0x7700u;
	GPIO_AFRL(GPIOB_BASE) = (GPIO_AFRL(GPIOB_BASE) & ~0xFF000000u) | 0x44000000u;
	GPIO_OTYPER(GPIOB_BASE) |= 3u << 6;
	GPIO_MODER(GPIOC_BASE) = (GPIO_MODER(GPIOC_BASE) & ~(0xFu << 12)) | 0x5u << 12;
	USART_BRR(UART) = 0x2Eu; /* 42 MHz / 921,600 baud (0.9 % fast) */
	I2C_CR2(I2C1_BASE) = 42;        /* APB1 MHz */
	I2C_CCR(I2C1_BASE) = 1u << 15 | 35; /* fast mode, 400 kHz */
	I2C_TRISE(I2C1_BASE) = 13;
	I2C_CR1(I2C1_BASE) = 1;         /* PE */
	/* INA228 addresses 0x40 + channel; shunts 20 mOhm (5 V), 10 mOhm (12 V);
	 * 8 uA and 10 uA LSBs; 150 us conversions, no averaging. */
	for (int ch = 0; ch < CHANS; ch++)
		ina228_init(&sensor[ch], &i2c, (uint8_t)(0x40 + ch), ch % 2 ? 10000 : 20000, ch % 2 ? 10000000 : 8000000, 2, 0);
}
#endif

static struct iw_hub hub;

int main(void)
{
	board_init();
	USART_CR1(UART) = USART_CR1_UE | USART_CR1_TE | USART_CR1_RE;
	clock_init();

	static struct iw_config c;
	memset(&c, 0, sizeof c);
	c.protocol = 2;
	c.ports = PORTS;
	c.rails = RAILS;
	c.rail[0] = (struct iw_rail){ IW_RAIL_5V, 5250, 50000, 8000000 };
	c.rail[1] = (struct iw_rail){ IW_RAIL_12V, 12600, 100000, 10000000 };
#ifdef BOARD_QEMU
	c.nrates = 4;
	c.rates[0] = 100;
	c.rates[1] = 1000;
	c.rates[2] = 2000;
	c.rates[3] = 5000;
#else
	/* Four INA228 on a 400 kHz I2C cost 1.4 ms a sample set (docs/firmware.md). */
	c.nrates = 2;
	c.rates[0] = 100;
	c.rates[1] = 500;
#endif
	c.caps = IW_CAP_DEVSLP | IW_CAP_MARKS;
	c.bus_lsb_uv = 1250;
	c.link_bytes_sec = 92160; /* 921,600 baud */
	c.model = "idlewatt open hub";
#ifdef BOARD_QEMU
	c.firmware = "0.1-qemu";
	c.serial = "QEMU-0001";
#else
	c.firmware = "0.1-feather";
	c.serial = "F405-0001";
#endif
	c.max_frame = MAX_FRAME;
	c.formats = 7;
	for (int ch = 0; ch < CHANS; ch++) {
		uint32_t shunt = ch % 2 ? 10000 : 20000;
		uint32_t lsb = ch % 2 ? 100000 : 50000, wide = ch % 2 ? 10000000 : 8000000;
#ifndef BOARD_QEMU
		wide = sensor[ch].lsb_pa ? sensor[ch].lsb_pa : wide;
		lsb = wide * 16u / 1000u;
#endif
		/* The INA226-equivalent CAL of the 16-bit LSB, which the host audits. */
		uint32_t cal = (uint32_t)(5120000000000ull / ((uint64_t)lsb * shunt));
		c.cal[ch] = (struct iw_cal){ (uint16_t)cal, shunt, lsb, wide };
	}
	c.ring = ring;
	c.ring_bytes = sizeof ring;
	c.sets = sets;
	c.sets_cap = sizeof sets;
	c.fb = fb;
	c.fb_cap = sizeof fb;
	c.zb = zb;
	c.zi = zi;
	c.z_cap = sizeof zb / sizeof zb[0];
	c.rxbuf = rxbuf;
	c.rx_cap = sizeof rxbuf;
#ifdef BOARD_QEMU
	for (int p = 0; p < PORTS; p++)
		iw_simdrive_init(&drive[p], p + 1, 1);
#endif
	struct iw_platform pl = { 0, read, devslp, 0, room, write };
	if (iw_hub_init(&hub, &c, &pl) != 0)
		for (;;) {
		}
	for (;;) {
		uint64_t now = now_ns();
		while (USART_SR(UART) & USART_SR_RXNE) {
			uint8_t b = (uint8_t)USART_DR(UART);
			iw_hub_rx(&hub, &b, 1, now);
		}
#ifdef BOARD_QEMU
		if (hub.rate)
			stream_rate = hub.rate;
#endif
#ifndef BOARD_QEMU
		sample_due(&hub, now);
#endif
		iw_hub_poll(&hub, now);
		drain();
	}
}
