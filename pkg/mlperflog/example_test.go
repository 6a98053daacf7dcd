package mlperflog_test

import (
	"fmt"
	"os"
	"time"

	"github.com/netloadgen/netloadgen/pkg/mlperflog"
)

func ExampleAccuracyLog() {
	a, err := mlperflog.NewAccuracyLog(os.Stdout)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = a.Add(0, 545, []byte{0x3f, 0x80, 0x00, 0x00}) // float32 1.0, little-endian
	_ = a.Add(1, 3, []byte{0xff})
	_ = a.Close()
	// Output:
	// [
	// { "seq_id" : 0, "qsl_idx" : 545, "data" : "3F800000" },
	// { "seq_id" : 1, "qsl_idx" : 3, "data" : "FF" }
	// ]
}

func ExampleDetailLog() {
	d := mlperflog.NewDetailLog(os.Stdout, mlperflog.DetailOptions{PID: 1, TID: 1})
	_ = d.Log(1500*time.Microsecond, "loaded_qsl_set", []int{545, 3})
	_ = d.Error(2*time.Millisecond, "error_runtime", "3 samples failed")
	fmt.Println("errors:", d.Errors())
	// Output:
	// :::MLLOG {"key": "loaded_qsl_set", "value": [545,3], "time_ms": 1.500000, "namespace": "mlperf::logging", "event_type": "POINT_IN_TIME", "metadata": {"is_error": false, "is_warning": false, "file": "netloadgen", "line_no": 0, "pid": 1, "tid": 1}}
	// :::MLLOG {"key": "error_runtime", "value": "3 samples failed", "time_ms": 2.000000, "namespace": "mlperf::logging", "event_type": "POINT_IN_TIME", "metadata": {"is_error": true, "is_warning": false, "file": "netloadgen", "line_no": 0, "pid": 1, "tid": 1}}
	// errors: 1
}
