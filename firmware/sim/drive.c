#include "drive.h"

void iw_simdrive_init(struct iw_simdrive *d, int port, uint64_t seed)
{
	/* Port 1 a 0.4 W idle SSD, others 0.2 W; both enter DevSlp in 2 ms and
	 * leave it in 20 ms (the shapes of docs/drive-profiles.md's JMF667H). */
	d->idle_ua = port == 1 ? 80000 : 40000;
	d->slumber_ua = port == 1 ? 14000 : 10000;
	d->floor_ua = port == 1 ? 900 : 800;
	d->burst_ua = 420000;
	d->entry_us = 2000;
	d->exit_us = 20000;
	d->burst_every_ms = 1500;
	d->burst_ms = 40;
	d->noise_ua = 500;
	d->asserted = 0;
	d->pin_idx = 0;
	d->rng = seed * 0x9E3779B97F4A7C15ull + (uint64_t)(uint32_t)port * 0xBF58476D1CE4E5B9ull + 1;
}

void iw_simdrive_pin(struct iw_simdrive *d, int asserted, uint64_t idx)
{
	d->asserted = asserted;
	d->pin_idx = idx;
}

static uint32_t next32(struct iw_simdrive *d)
{
	/* xorshift64* */
	d->rng ^= d->rng >> 12;
	d->rng ^= d->rng << 25;
	d->rng ^= d->rng >> 27;
	return (uint32_t)((d->rng * 0x2545F4914F6CDD1Dull) >> 32);
}

int32_t iw_simdrive_noise(struct iw_simdrive *d, int32_t sigma)
{
	/* Irwin-Hall of 4 uniforms: mean 2, variance 1/3; scaled to sigma. */
	int64_t s = 0;
	for (int i = 0; i < 4; i++)
		s += next32(d) >> 16; /* 0 .. 65535 */
	s -= 2 * 65536;
	/* sd of s is 65536 / sqrt(3) = 37837 */
	return (int32_t)(s * sigma / 37837);
}

int32_t iw_simdrive_current(struct iw_simdrive *d, uint64_t idx, uint32_t rate)
{
	uint64_t since_us = idx >= d->pin_idx ? (idx - d->pin_idx) * 1000000u / rate : 0;
	int32_t level;
	if (d->asserted)
		level = since_us >= d->entry_us ? d->floor_ua : d->slumber_ua;
	else if (d->pin_idx > 0 && since_us < d->exit_us)
		level = d->slumber_ua; /* waking from DevSlp */
	else {
		level = d->idle_ua;
		if (d->burst_every_ms) {
			uint64_t ms = idx * 1000u / rate;
			if (ms % d->burst_every_ms < d->burst_ms)
				level = d->burst_ua;
		}
	}
	/* A DevSlp floor is quieter than the sensor's full noise. */
	int32_t sigma = level < 5000 ? d->noise_ua / 4 : d->noise_ua;
	return level + iw_simdrive_noise(d, sigma);
}
