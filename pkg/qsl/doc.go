// Package qsl holds query sample libraries: the samples a run sends, as raw
// tensors ready to be batched into requests. Samples are made or loaded
// before the clock starts (LoadGen's "untimed" load).
//
// Synthetic makes samples from the model's metadata. Files (Open) reads
// them from a path, checked against the model's metadata before a run
// starts; every error is a *DataError naming the file (and JSON entry),
// the input and the mismatch.
//
// # Layouts
//
// Shapes below are a sample's, without the batch dimension of a batching
// model. A path is one of:
//
//   - a .json file: perf_analyzer's input data, {"data": [entry, ...]}, each
//     entry mapping every input name to a flat row-major list (nested lists
//     are flattened), to {"content": list, "shape": [...]}, to
//     {"content": {"b64": "..."}, "shape": [...]} or to {"b64": "..."} of raw
//     little-endian bytes (for BYTES, 4-byte length-prefixed elements). Every
//     datatype; BYTES lists hold strings, BOOL true/false, FP16 and BF16
//     numbers (rounded to nearest even). Without "shape" the input's shape
//     is used, its one variable dimension (if any) solved from the element
//     count. Sequence streams ({"data": [[entry, ...], ...]}) are taken one
//     after another; "validation_data" is ignored.
//   - a .npy file (a single-input model): the samples stacked along axis 0.
//   - a .bin or .raw file (a single-input model): samples concatenated.
//   - a directory where each input NAME has either a subdirectory NAME/
//     holding one sample per file (.npy, .bin or .raw, taken in name order),
//     or a file NAME.npy (stacked along axis 0) or NAME.bin / NAME.raw
//     (concatenated). Inputs may mix the two forms; every input must have
//     the same number of samples.
//   - for a single-input model, a directory whose .npy/.bin/.raw files are
//     the samples themselves, one per file, in name order (used when the
//     directory has no entry named after the input).
//
// Files with other extensions and names starting with "." are ignored.
//
// # Checks
//
// A .npy file (format 1.0, 2.0 or 3.0, C order only; big-endian is
// byte-swapped) must have the input's datatype exactly: |b1 BOOL, i1-i8
// INT8-INT64, u1-u8 UINT8-UINT64, f2 FP16, f4 FP32, f8 FP64; no implicit
// conversion. BF16 has no numpy dtype: store its bits as <u2, accepted only
// for a BF16 input. BYTES inputs cannot come from .npy. Its shape must
// match the input's (a variable dimension takes any size); for a batching
// model a leading dimension of 1 is also accepted and dropped (a batch of
// one). The file size must be exactly what the header implies.
//
// Raw files carry no shape, so the input's shape must be fixed; a
// per-sample file must be exactly one sample's size, a concatenated one a
// whole number of samples. A BYTES input takes raw files only one per
// sample (elements length-prefixed).
//
// All samples of an input must share one shape, variable dimensions
// included: samples are batched by concatenating their bytes.
//
// # Counts and loading
//
// TotalSampleCount is the number of samples found; PerformanceSampleCount
// is that, capped by FilesOptions.Performance. LoadGen chooses the loaded
// set from them; Load reads only those samples (headers are read at Open,
// tensor data at Load) and drops any other resident sample.
package qsl
