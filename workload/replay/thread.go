package replay

import "runtime"

func lockThread() { runtime.LockOSThread() }
