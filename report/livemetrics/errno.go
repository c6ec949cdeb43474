package livemetrics

import "syscall"

var errAddrInUse = syscall.EADDRINUSE
