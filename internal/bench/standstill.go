package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// StandStillGoal is the longest a stage may stand still with input waiting,
// in any step (issue 30).
const StandStillGoal = 250 * time.Millisecond

// StandStill is the longest time any stage stood still during one step: its
// worker ready for input, input waiting on its consumer, none delivered
// (worker.Config.Gap, from the delivered input's arrival on the stream).
// Stage is empty when no stage stood still 1 ms or more.
type StandStill struct {
	Step    string        `json:"step"`
	Stage   string        `json:"stage"`
	Longest time.Duration `json:"longest_ns"`
}

// Longest is step's StandStill from the stages' longest stand-stills
// (metrics.TakeLongestGaps).
func Longest(step string, gaps map[string]time.Duration) StandStill {
	s := StandStill{Step: step}
	for _, stage := range slices.Sorted(maps.Keys(gaps)) {
		if d := gaps[stage]; d > s.Longest {
			s.Stage, s.Longest = stage, d
		}
	}
	return s
}

// MaxStandStill is the longest of all steps.
func MaxStandStill(steps []StandStill) time.Duration {
	var m time.Duration
	for _, s := range steps {
		m = max(m, s.Longest)
	}
	return m
}

// FormatStandStills prints the steps' stand-stills as a table.
func FormatStandStills(steps []StandStill) string {
	var sb strings.Builder
	sb.WriteString("| step | longest stand-still | stage |\n|---|---|---|\n")
	for _, s := range steps {
		stage := s.Stage
		if stage == "" {
			stage = "– (none of 1 ms)"
		}
		fmt.Fprintf(&sb, "| %s | %.1f ms | %s |\n", s.Step, float64(s.Longest)/1e6, stage)
	}
	return sb.String()
}
