package csvexport_test

import (
	"log"
	"os"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/report/csvexport"
)

// Export the example capture of docs/capture-format.md: one port, two
// rails; the 12 V rail lacks indices 2 and 3 (a CRC gap), so their 12 V
// cells are empty while the 5 V rail has its samples.
func Example() {
	r, err := capture.Open("../../fixtures/capture/tiny.iwcap")
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	if _, err := csvexport.Write(os.Stdout, r, csvexport.All); err != nil {
		log.Fatal(err)
	}
	// Output:
	// t_s,sample_index,gap,p1_5v_v,p1_5v_a,p1_5v_w,p1_12v_v,p1_12v_a,p1_12v_w,p1_total_w,p1_drive,run_id
	// 0,0,,5,0.25,1.25,12,0.125,1.5,2.75,,1a714154a94a30f2
	// 0.001,1,,5,0.5,2.5,12,0.125,1.5,4,,1a714154a94a30f2
	// 0.002,2,,5,0.25,1.25,,,,,,1a714154a94a30f2
	// 0.003,3,,5,0.5,2.5,,,,,,1a714154a94a30f2
}
