package trace_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/idlewatt/idlewatt/workload/trace"
)

func ExampleNewFioReader() {
	log := `fio version 2 iolog
/dev/sdb add
/dev/sdb open
/dev/sdb read 0 4096
/dev/sdb wait 250 0
/dev/sdb write 8192 4096
/dev/sdb close
`
	r := trace.NewFioReader(strings.NewReader(log), "example.log")
	for {
		op, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(op.Time, op.Type, op.Offset, op.Size, op.File)
	}
	// Output:
	// 0s read 0 4096 /dev/sdb
	// 250ms write 8192 4096 /dev/sdb
}
