package runspec

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/shape"
)

// maxSessionsField bounds the sessions and think_time fields' text.
const maxSessionsField = 4096

// buildSessions makes a spec's multi-turn sessions (sessions,
// think_time): the schedule set as ls's Shape and Sessions, sessions
// starting within min_duration_ms, and the conversations of a data set
// (nil: each turn's user message is its sample's prompt).
func buildSessions(s api.RunSpec, ls *loadgen.Settings, env Env) (*genai.Conversations, error) {
	if s.Sessions == "" {
		if s.ThinkTime != "" {
			return nil, fieldErr("think_time", "applies to sessions only: set sessions too")
		}
		return nil, nil
	}
	for _, f := range []struct{ name, v string }{{"sessions", s.Sessions}, {"think_time", s.ThinkTime}} {
		if len(f.v) > maxSessionsField {
			return nil, fieldErr(f.name, "longer than %d bytes", maxSessionsField)
		}
	}
	switch {
	case s.Workers > 0:
		return nil, fieldErr("sessions", "a session's turns follow its answers on one host: leave workers out")
	case s.Search != nil:
		return nil, fieldErr("sessions", "sessions set their own rate: a search has nothing to vary; leave search out")
	}
	if ls.Shape != nil {
		return nil, fieldErr("sessions", "sessions make their own schedule: leave out stages, trace and mix")
	}
	f, err := shape.ParseSessions(s.Sessions)
	if err != nil {
		return nil, fieldErr("sessions", "%s", shapeText(err))
	}
	var think shape.ThinkTime
	if s.ThinkTime != "" {
		if think, err = shape.ParseThinkTime(s.ThinkTime); err != nil {
			return nil, fieldErr("think_time", "%s", shapeText(err))
		}
	}
	o := shape.SessionsOptions{Rate: f.Rate, Turns: f.Turns, Duration: time.Duration(ls.MinDurationMs) * time.Millisecond,
		Seed: ls.ScheduleRNGSeed, Think: think}
	var conv *genai.Conversations
	if f.File != "" {
		path, err := sessionsFile(f.File, env)
		if err != nil {
			return nil, err
		}
		if conv, err = genai.LoadConversations(path); err != nil {
			return nil, fieldErr("sessions", "%s", strings.TrimPrefix(err.Error(), genai.ErrData.Error()+": "))
		}
		o.TurnsOf = conv.Turns()
	}
	sess, err := shape.NewSessions(o)
	if err != nil {
		return nil, fieldErr("sessions", "%s", shapeText(err))
	}
	ls.Shape, ls.Sessions = sess, sess
	return conv, nil
}

// shapeText is a pkg/shape error without its sentinel's prefix.
func shapeText(err error) string {
	return strings.TrimPrefix(err.Error(), shape.ErrShape.Error()+": ")
}

// sessionsFile is where a data set of conversations is: any path for the
// CLI, under LOADGEND_DATA_ROOT for the daemon (ResolveData's rules).
func sessionsFile(name string, env Env) (string, error) {
	if env.AnyData && env.DataRoot == "" {
		return name, nil
	}
	if env.DataRoot == "" {
		return "", fieldErr("sessions", "data sets are off: the daemon reads them only under LOADGEND_DATA_ROOT, which is not set")
	}
	root, err := filepath.EvalSymlinks(env.DataRoot)
	if err != nil {
		return "", fieldErr("sessions", "LOADGEND_DATA_ROOT %s: %v", env.DataRoot, err)
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err != nil {
		return "", fieldErr("sessions", "%s: no such file under LOADGEND_DATA_ROOT", name)
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fieldErr("sessions", "%s is outside LOADGEND_DATA_ROOT", name)
	}
	return real, nil
}
