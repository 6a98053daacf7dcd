package kserve

// Parameters are the protocol's free-form parameters. Values are string, bool,
// int64, uint64 or float64 (a JSON number decodes to int64 when it is integral
// and fits, else to float64).
type Parameters map[string]any

// Tensor is one input or output tensor. Data holds the raw little-endian
// row-major bytes; for BYTES each element is a 4-byte little-endian length
// followed by its bytes.
type Tensor struct {
	Name       string
	Datatype   DataType
	Shape      []int64
	Parameters Parameters
	Data       []byte
}

// RequestedOutput names an output the client wants back.
type RequestedOutput struct {
	Name       string
	Parameters Parameters
}

// InferRequest is one inference request.
type InferRequest struct {
	Model      string // from the URL path or model_name; not in the JSON body
	Version    string // optional
	ID         string
	Parameters Parameters
	Inputs     []Tensor
	Outputs    []RequestedOutput // empty: all outputs
}

// InferResponse is one inference response.
type InferResponse struct {
	Model      string
	Version    string
	ID         string
	Parameters Parameters
	Outputs    []Tensor
}

// TensorMetadata describes a model input or output; -1 in Shape is a variable
// dimension.
type TensorMetadata struct {
	Name     string   `json:"name"`
	Datatype DataType `json:"datatype"`
	Shape    []int64  `json:"shape"`
}

// ServerMetadata is the answer to GET /v2 and ServerMetadata.
type ServerMetadata struct {
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	Extensions []string `json:"extensions"`
}

// ModelMetadata is the answer to GET /v2/models/{model} and ModelMetadata.
type ModelMetadata struct {
	Name     string           `json:"name"`
	Versions []string         `json:"versions,omitempty"`
	Platform string           `json:"platform"`
	Inputs   []TensorMetadata `json:"inputs"`
	Outputs  []TensorMetadata `json:"outputs"`
}

// Extension names a server may list in its metadata.
const (
	ExtBinaryTensorData   = "binary_tensor_data"
	ExtStatistics         = "statistics"
	ExtModelConfiguration = "model_configuration"
	// ExtModelRepository is Triton's model repository extension: its
	// POST /v2/repository/index lists the models a server has.
	ExtModelRepository = "model_repository"
)

// ElementCount is the number of elements a shape holds; -1 if a dimension is
// negative.
func ElementCount(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return -1
		}
		n *= d
	}
	return n
}
