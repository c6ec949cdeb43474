// LD_PRELOAD shim: answers nvme-cli's admin ioctls from files, so the
// Debian nvme-cli prints Identify Controller / Get Features data we built,
// and HDIO_DRIVE_CMD IDENTIFY DEVICE, so smartctl -d ata prints an IDENTIFY image.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct cmd { uint8_t opcode, flags; uint16_t rsvd1; uint32_t nsid, cdw2, cdw3; uint64_t metadata, addr;
  uint32_t metadata_len, data_len, cdw10, cdw11, cdw12, cdw13, cdw14, cdw15, timeout_ms; uint32_t result; uint32_t result_hi; };
static int readf(const char *env, void *dst, uint32_t n) {
  const char *p = getenv(env); if (!p) return -1; FILE *f = fopen(p, "rb"); if (!f) return -1;
  memset(dst, 0, n); fread(dst, 1, n, f); fclose(f); return 0; }
int ioctl(int fd, unsigned long req, ...) {
  va_list ap; va_start(ap, req); void *arg = va_arg(ap, void *); va_end(ap);
  if (req == 0xC0484E41UL || req == 0xC0504E47UL) {
    struct cmd *c = arg; void *buf = (void *)(uintptr_t)c->addr; uint64_t res = 0;
    if (c->opcode == 0x06 && (c->cdw10 & 0xff) == 1) { if (readf("IW_IDCTRL", buf, c->data_len)) return -1; }
    else if (c->opcode == 0x0a && (c->cdw10 & 0xff) == 0x0c) { if (c->data_len) readf("IW_APST", buf, c->data_len);
      const char *d = getenv("IW_APST_DW0"); res = d ? strtoul(d, 0, 0) : 0; }
    else if (c->data_len) memset(buf, 0, c->data_len);
    if (req == 0xC0484E41UL) c->result = (uint32_t)res; else { c->result = (uint32_t)res; c->result_hi = 0; }
    return 0; }
  if (req == 0x031fUL) { /* HDIO_DRIVE_CMD: smartctl -d ata's IDENTIFY DEVICE */
    uint8_t *b = arg; if (b[0] == 0xEC && getenv("IW_IDENTIFY")) { if (readf("IW_IDENTIFY", b + 4, 512)) return -1; b[0] = 0x50; return 0; }
    errno = EIO; return -1; }
  int (*real)(int, unsigned long, ...) = dlsym(RTLD_NEXT, "ioctl"); return real(fd, req, arg); }
