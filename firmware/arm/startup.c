/* Cortex-M4 start-up: the vector table, .data and .bss, then main. */
#include <stdint.h>

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
int main(void);
void SysTick_Handler(void);

static void Reset_Handler(void)
{
	uint32_t *s = &_sidata, *d = &_sdata;
	while (d < &_edata)
		*d++ = *s++;
	for (d = &_sbss; d < &_ebss;)
		*d++ = 0;
	main();
	for (;;) {
	}
}

static void Default_Handler(void)
{
	for (;;) {
	}
}

__attribute__((section(".isr_vector"), used)) static void (*const vectors[16])(void) = {
	(void (*)(void))(&_estack), Reset_Handler, Default_Handler, Default_Handler, Default_Handler,
	Default_Handler, Default_Handler, 0, 0, 0, 0, Default_Handler, Default_Handler, 0,
	Default_Handler, SysTick_Handler,
};
