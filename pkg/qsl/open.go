package qsl

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/netloadgen/netloadgen/kserve"
)

// Sample file extensions: .npy, and raw little-endian bytes as .bin or .raw.
func isNPY(name string) bool { return strings.EqualFold(filepath.Ext(name), ".npy") }
func isRaw(name string) bool {
	e := strings.ToLower(filepath.Ext(name))
	return e == ".bin" || e == ".raw"
}
func isJSON(name string) bool { return strings.EqualFold(filepath.Ext(name), ".json") }

// CheckPath is the check of --data that needs no model: the path exists and
// is a file of a known kind or a directory holding something that could be
// samples. Open does the full check against the model.
func CheckPath(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		if isJSON(path) || isNPY(path) || isRaw(path) {
			return nil
		}
		return dataErr(path, "", ErrFormat, "a data file is .json (perf_analyzer input data), .npy or .bin/.raw")
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !hidden(e.Name()) && (e.IsDir() || isNPY(e.Name()) || isRaw(e.Name())) {
			return nil
		}
	}
	return dataErr(path, "", ErrNoSamples, "the directory holds no .npy, .bin or .raw files and no subdirectories")
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }

// Open reads the samples at path for a model, validating every file against
// the model's metadata (see the package documentation for the layouts).
// Errors about the data are *DataError naming the file and the input.
func Open(path string, md kserve.ModelMetadata, o FilesOptions) (*Files, error) {
	inputs, err := sampleInputs(md, o.Batched)
	if err != nil {
		return nil, err
	}
	if err := CheckPath(path); err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var srcs []source
	switch {
	case !st.IsDir() && isJSON(path):
		srcs, err = readJSON(path, inputs, o.Batched)
	case !st.IsDir():
		if len(inputs) != 1 {
			return nil, dataErr(path, "", ErrFormat, "one file serves a single-input model; model %q has %d inputs (%s): give a directory with a file or subdirectory per input", md.Name, len(inputs), inputNames(inputs))
		}
		var src source
		src, err = stacked(path, inputs[0], o.Batched)
		srcs = []source{src}
	default:
		srcs, err = fromDir(path, inputs, o.Batched)
	}
	if err != nil {
		return nil, err
	}
	return newFiles(path, srcs, o)
}

func inputNames(inputs []kserve.TensorMetadata) string {
	names := make([]string, len(inputs))
	for i, in := range inputs {
		names[i] = in.Name
	}
	return strings.Join(names, ", ")
}

// fromDir resolves each input in a directory: a subdirectory named after it
// (one sample per file) or a file <input>.npy / .bin / .raw (samples
// stacked); a single-input model may instead have its sample files directly
// in the directory.
func fromDir(dir string, inputs []kserve.TensorMetadata, batched bool) ([]source, error) {
	srcs := make([]source, 0, len(inputs))
	var missing []string
	for _, in := range inputs {
		var found []string
		if st, err := os.Stat(filepath.Join(dir, in.Name)); err == nil && st.IsDir() {
			found = append(found, filepath.Join(dir, in.Name))
		}
		for _, ext := range []string{".npy", ".bin", ".raw"} {
			p := filepath.Join(dir, in.Name+ext)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				found = append(found, p)
			}
		}
		switch len(found) {
		case 0:
			missing = append(missing, in.Name)
			continue
		case 1:
		default:
			return nil, dataErr(dir, in.Name, ErrFormat, "ambiguous: both %s", strings.Join(found, " and "))
		}
		var src source
		var err error
		if st, _ := os.Stat(found[0]); st.IsDir() {
			src, err = perSample(found[0], in, batched)
		} else {
			src, err = stacked(found[0], in, batched)
		}
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, src)
	}
	switch {
	case len(missing) == 0:
		return srcs, nil
	case len(inputs) == 1:
		src, err := perSample(dir, inputs[0], batched)
		return []source{src}, err
	case len(missing) < len(inputs):
		return nil, dataErr(dir, missing[0], ErrMissingInput, "no subdirectory %s/ and no file %s.npy, .bin or .raw, though other inputs have theirs", missing[0], missing[0])
	}
	return nil, dataErr(dir, "", ErrFormat, "model has inputs %s: expected a subdirectory (one sample per file) or a file <input>.npy/.bin/.raw (samples stacked) for each", inputNames(inputs))
}
