package runspec

import (
	"path/filepath"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/qsl"
)

// ResolveData is where a spec's data path points on the daemon's host: a
// relative path is taken under root, and the result, symbolic links
// followed, must stay under root. The control API can be reached from the
// network, so without a root (LOADGEND_DATA_ROOT unset) it reads no file:
// any path would otherwise let a caller send the daemon's files to a target
// of its choosing.
func ResolveData(root, data string) (string, error) {
	if root == "" {
		return "", fieldErr("data", "sample files are off: the daemon reads them only under LOADGEND_DATA_ROOT, which is not set")
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fieldErr("data", "LOADGEND_DATA_ROOT %s: %v", root, err)
	}
	p := data
	if !filepath.IsAbs(p) {
		p = filepath.Join(realRoot, p)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err != nil {
		return "", fieldErr("data", "%s: no such file or directory under LOADGEND_DATA_ROOT", data)
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fieldErr("data", "%s is outside LOADGEND_DATA_ROOT", data)
	}
	if isPromptData(real) {
		return real, nil // read, and checked, by buildPrompts
	}
	if err := qsl.CheckPath(real); err != nil {
		return "", fieldErr("data", "%v", err)
	}
	return real, nil
}
