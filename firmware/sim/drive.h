/* A synthetic sensor: a simulated SATA drive behind each port, for the
 * host build (hubsim) and the QEMU build, where there is no INA228 to read.
 * Integer arithmetic only (no FPU needed). */
#ifndef IW_SIMDRIVE_H
#define IW_SIMDRIVE_H

#include <stdint.h>

struct iw_simdrive {
	/* levels on the 5 V rail, uA */
	int32_t idle_ua, slumber_ua, floor_ua, burst_ua;
	uint32_t entry_us;   /* DEVSLP asserted -> floor */
	uint32_t exit_us;    /* DEVSLP released -> idle (slumber meanwhile) */
	uint32_t burst_every_ms, burst_ms; /* periodic activity; 0: none */
	int32_t noise_ua;    /* about 1 sigma of sensor noise */
	/* state */
	int asserted;
	uint64_t pin_idx;    /* sample index of the last pin change */
	uint64_t rng;
};

void iw_simdrive_init(struct iw_simdrive *d, int port, uint64_t seed);
void iw_simdrive_pin(struct iw_simdrive *d, int asserted, uint64_t idx);
/* iw_simdrive_current is the drive's 5 V current at sample idx (rate Hz),
 * noise included, in uA. */
int32_t iw_simdrive_current(struct iw_simdrive *d, uint64_t idx, uint32_t rate);
int32_t iw_simdrive_noise(struct iw_simdrive *d, int32_t sigma);

#endif
