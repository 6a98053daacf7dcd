package main

// addSessionFlags registers the flags of a generative run's multi-turn
// sessions (issue 31, docs/load-shapes.md), spec fields sessions and
// think_time.
func (f *specFlags) addSessionFlags() {
	spec := &f.spec
	f.str(&spec.Sessions, "sessions", "sessions", "", "generative models: multi-turn conversations, RATE:TURNS (new sessions a second, Poisson, starting within --min-duration-ms; turns a session as a length law: 4, uniform:2:6, …) or RATE:@FILE (a ShareGPT-style data set of conversations, JSON or JSONL: session s replays conversation s mod N). Turn k sends the conversation so far with the server's answers; result.json's sessions has TTFT and TPOT per turn")
	f.str(&spec.ThinkTime, "think-time", "think_time", "", "with --sessions: time between an answer and the session's next turn: DURATION, uniform:MIN:MAX or exponential:MEAN (default 0)")
}
