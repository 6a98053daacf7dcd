package sim

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

func TestParseModelFlag(t *testing.T) {
	tests := []struct {
		flag string
		want ModelSpec
	}{
		{
			flag: "name=fast,fn=echo,dtype=FP32,dims=16,latency=constant:2ms,instances=4,batch=8,delay=1ms",
			want: ModelSpec{Name: "fast", Function: Echo, MaxBatchSize: 8, Instances: 4,
				Inputs:          []TensorSpec{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{-1, 16}}},
				Latency:         LatencySpec{Distribution: Constant, Value: Duration(2 * time.Millisecond)},
				DynamicBatching: &BatchingSpec{MaxBatchSize: 8, MaxQueueDelay: Duration(time.Millisecond)}},
		},
		{
			flag: "name=s,fn=add_sub,max_batch=0,dims=4x4",
			want: ModelSpec{Name: "s", Function: AddSub,
				Inputs: []TensorSpec{{Name: "INPUT0", Datatype: kserve.Int32, Shape: []int64{4, 4}}, {Name: "INPUT1", Datatype: kserve.Int32, Shape: []int64{4, 4}}}},
		},
		{
			flag: "name=c,fn=classify,classes=10,dims=3x32x32,latency=lognormal:3ms:0.25,per_sample=100us,seed=9,versions=1:2",
			want: ModelSpec{Name: "c", Function: Classify, NumClasses: 10, MaxBatchSize: 8, Seed: 9, Versions: []string{"1", "2"},
				Inputs:  []TensorSpec{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{-1, 3, 32, 32}}},
				Latency: LatencySpec{Distribution: LogNormal, Median: Duration(3 * time.Millisecond), Sigma: 0.25, PerSample: Duration(100 * time.Microsecond)}},
		},
		{
			flag: "name=big,batch=32,latency=uniform:1ms:2ms,inputs=2,dtype=uint8,dims=-1,platform=p",
			want: ModelSpec{Name: "big", Function: Echo, MaxBatchSize: 32, Platform: "p",
				Inputs:          []TensorSpec{{Name: "INPUT0", Datatype: kserve.Uint8, Shape: []int64{-1, -1}}, {Name: "INPUT1", Datatype: kserve.Uint8, Shape: []int64{-1, -1}}},
				Latency:         LatencySpec{Distribution: Uniform, Min: Duration(time.Millisecond), Max: Duration(2 * time.Millisecond)},
				DynamicBatching: &BatchingSpec{MaxBatchSize: 32}},
		},
		{
			flag: "name=e,latency=empirical:1ms:5ms:9ms",
			want: ModelSpec{Name: "e", Function: Echo, MaxBatchSize: 8,
				Inputs:  []TensorSpec{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{-1, 16}}},
				Latency: LatencySpec{Distribution: Empirical, Samples: []Duration{Duration(time.Millisecond), Duration(5 * time.Millisecond), Duration(9 * time.Millisecond)}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			got, err := ParseModelFlag(tt.flag)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseModelFlagRejects(t *testing.T) {
	tests := []struct{ flag, mention string }{
		{"fn=echo", `"name"`},
		{"name=a,instances=0", `"instances"`},
		{"name=a,instances=x", `"instances"`},
		{"name=a,latency=constant", `"latency"`},
		{"name=a,latency=constant:2", `"latency"`},
		{"name=a,latency=normal:2ms", `"latency"`},
		{"name=a,latency=lognormal:2ms:x", `"latency"`},
		{"name=a,dims=0", `"dims"`},
		{"name=a,dtype=FP33", `"dtype"`},
		{"name=a,colour=red", `"colour"`},
		{"name=a,name=b", `"name"`},
		{"name=a,delay=1ms", `"delay"`},
		{"name=a,fn=classify", "num_classes"},
		{"name=a,max_batch=4,batch=8", "dynamic_batching.max_batch_size"},
		{"name=a,noequals", "noequals"},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			_, err := ParseModelFlag(tt.flag)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %s", err, tt.mention)
			}
		})
	}
}
