/* The few STM32F405 registers the firmware touches (RM0090). */
#ifndef IW_STM32F4_H
#define IW_STM32F4_H

#include <stdint.h>

#define REG(a) (*(volatile uint32_t *)(a))

#define RCC_BASE 0x40023800u
#define RCC_CR REG(RCC_BASE + 0x00)
#define RCC_PLLCFGR REG(RCC_BASE + 0x04)
#define RCC_CFGR REG(RCC_BASE + 0x08)
#define RCC_AHB1ENR REG(RCC_BASE + 0x30)
#define RCC_APB1ENR REG(RCC_BASE + 0x40)
#define RCC_APB2ENR REG(RCC_BASE + 0x44)
#define FLASH_ACR REG(0x40023C00u)

#define GPIOA_BASE 0x40020000u
#define GPIOB_BASE 0x40020400u
#define GPIOC_BASE 0x40020800u
#define GPIO_MODER(b) REG((b) + 0x00)
#define GPIO_OTYPER(b) REG((b) + 0x04)
#define GPIO_PUPDR(b) REG((b) + 0x0C)
#define GPIO_BSRR(b) REG((b) + 0x18)
#define GPIO_AFRL(b) REG((b) + 0x20)
#define GPIO_AFRH(b) REG((b) + 0x24)

#define USART1_BASE 0x40011000u
#define USART_SR(b) REG((b) + 0x00)
#define USART_DR(b) REG((b) + 0x04)
#define USART_BRR(b) REG((b) + 0x08)
#define USART_CR1(b) REG((b) + 0x0C)
#define USART_SR_RXNE (1u << 5)
#define USART_SR_TXE (1u << 7)
#define USART_SR_ORE (1u << 3)
#define USART_CR1_UE (1u << 13)
#define USART_CR1_TE (1u << 3)
#define USART_CR1_RE (1u << 2)

#define I2C1_BASE 0x40005400u
#define I2C_CR1(b) REG((b) + 0x00)
#define I2C_CR2(b) REG((b) + 0x04)
#define I2C_DR(b) REG((b) + 0x10)
#define I2C_SR1(b) REG((b) + 0x14)
#define I2C_SR2(b) REG((b) + 0x18)
#define I2C_CCR(b) REG((b) + 0x1C)
#define I2C_TRISE(b) REG((b) + 0x20)

#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)

#endif
