package trace

import "fmt"

// Scenario is one of LoadGen's four test scenarios.
type Scenario int

// The scenarios, in LoadGen's enum order.
const (
	SingleStream Scenario = iota
	MultiStream
	Server
	Offline
)

var scenarioNames = [...]string{"SingleStream", "MultiStream", "Server", "Offline"}

// String returns LoadGen's name for the scenario (as in mlperf.conf keys).
func (s Scenario) String() string {
	if s < 0 || int(s) >= len(scenarioNames) {
		return fmt.Sprintf("Scenario(%d)", int(s))
	}
	return scenarioNames[s]
}

// ParseScenario accepts LoadGen's scenario names, exactly as mlperf.conf
// spells them.
func ParseScenario(name string) (Scenario, error) {
	for i, n := range scenarioNames {
		if n == name {
			return Scenario(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown scenario %q (want SingleStream, MultiStream, Server or Offline)", ErrInvalidSettings, name)
}
