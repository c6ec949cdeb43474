package gen_test

import (
	"fmt"

	"github.com/idlewatt/idlewatt/workload/gen"
)

func ExamplePattern() {
	r, _ := gen.Pattern("seqread128k", 1, 384<<10, 4) // three 128 KiB blocks: wraps
	for {
		op, err := r.Next()
		if err != nil {
			break
		}
		fmt.Println(op.Type, op.Offset, op.Size)
	}
	// Output:
	// read 0 131072
	// read 131072 131072
	// read 262144 131072
	// read 0 131072
}
