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
	real, err := resolveUnder(root, data, "data", "sample files")
	if err != nil {
		return "", err
	}
	if isPromptData(real) {
		return real, nil // read, and checked, by buildPrompts
	}
	if err := qsl.CheckPath(real); err != nil {
		return "", fieldErr("data", "%v", err)
	}
	return real, nil
}

// resolveUnder is p on the daemon's host, confined to root as ResolveData
// says, its errors naming field; what names the files in the refusal
// without a root.
func resolveUnder(root, p, field, what string) (string, error) {
	if root == "" {
		return "", fieldErr(field, "%s are off: the daemon reads them only under LOADGEND_DATA_ROOT, which is not set", what)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fieldErr(field, "LOADGEND_DATA_ROOT %s: %v", root, err)
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(realRoot, abs)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(abs))
	if err != nil {
		return "", fieldErr(field, "%s: no such file or directory under LOADGEND_DATA_ROOT", p)
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fieldErr(field, "%s is outside LOADGEND_DATA_ROOT", p)
	}
	return real, nil
}
