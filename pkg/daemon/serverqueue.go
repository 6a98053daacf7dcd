package daemon

import (
	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/serverstats"
)

// noteServerQueue keeps the run's latest live figure of the server's
// statistics (runner.Options.ServerQueue), for its progress events.
func (a *activeRun) noteServerQueue(l serverstats.Live) { a.serverQueue.Store(&l) }

// addServerQueue puts the latest live figure in p: the last read's mean
// queue time when a request was answered since the read before, the run's
// so far once any was.
func (a *activeRun) addServerQueue(p *api.Progress) {
	l := a.serverQueue.Load()
	if l == nil {
		return
	}
	if l.Requests > 0 {
		p.ServerQueueNs = new(l.QueueNs)
	}
	if l.RunRequests > 0 {
		p.ServerQueueRunNs = new(l.RunQueueNs)
	}
}
