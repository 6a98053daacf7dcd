package triton

// RepositoryModel is one entry of Triton's repository index
// (POST /v2/repository/index, the model_repository extension).
type RepositoryModel struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	State   string `json:"state,omitempty"`
	Reason  string `json:"reason,omitempty"`
}
