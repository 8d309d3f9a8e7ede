package bench

import (
	"fmt"
	"strings"
)

// Goal is one figure of issue 20 beside its goal.
type Goal struct {
	Figure string  `json:"figure"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	// AtMost: the figure must be at most Limit; otherwise at least.
	AtMost bool    `json:"at_most"`
	Limit  float64 `json:"limit"`
	Met    bool    `json:"met"`
}

// Figures are the measured values the goals are judged on.
type Figures struct {
	PipelinePerCeiling float64 // percent
	HalfP99Ms          float64
	CPUPer1000s        float64 // process + redis-server
	PeakRSSMiB         float64
	GatesPerCallUs     float64 // parse+validate+business+policy pure cores
	StandStillMs       float64 // the longest of any stage in any step
	TrustPerCallUs     float64 // toolgate's own, the executor's apart
	// NATS is where the nats-server ran: whether PeakRSSMiB and
	// CPUPer1000s include it.
	NATS NATSPlace
}

// Goals judges f against issue 20's goals.
func Goals(f Figures) []Goal {
	g := []Goal{
		{Figure: "pipeline / ceiling", Value: f.PipelinePerCeiling, Unit: "%", Limit: 75},
		{Figure: "p99 end to end at half the max rate", Value: f.HalfP99Ms, Unit: "ms", AtMost: true, Limit: 20},
		{Figure: "CPU per 1,000 calls (" + f.NATS.CPUWhat() + ")", Value: f.CPUPer1000s, Unit: "s", AtMost: true, Limit: 0.40},
		{Figure: rssFigure(f.NATS), Value: f.PeakRSSMiB, Unit: "MiB", AtMost: true, Limit: 150},
		{Figure: "gates' CPU per valid call (parse+validate+business+policy cores)", Value: f.GatesPerCallUs, Unit: "µs", AtMost: true, Limit: 50},
		{Figure: "toolgate's trust CPU per valid call (seals, seal checks, request signature, known token)", Value: f.TrustPerCallUs, Unit: "µs", AtMost: true, Limit: 15},
		{Figure: "longest stand-still of a stage with input waiting (any step)", Value: f.StandStillMs, Unit: "ms", AtMost: true, Limit: float64(StandStillGoal) / 1e6},
	}
	for i := range g {
		if g[i].AtMost {
			g[i].Met = g[i].Value <= g[i].Limit
		} else {
			g[i].Met = g[i].Value >= g[i].Limit
		}
	}
	return g
}

// rssFigure names the RSS goal's figure: issue 30's goal is toolgate's
// own processes, which a run with the server embedded cannot tell apart.
func rssFigure(p NATSPlace) string {
	if p == NATSEmbedded {
		return "peak RSS (steps 1-3; this process, the embedded nats-server included)"
	}
	return "toolgate's own peak RSS (steps 1-3; nats-server apart)"
}

// FormatGoals prints the goals as a table.
func FormatGoals(goals []Goal) string {
	var sb strings.Builder
	sb.WriteString("| figure | this run | goal | met |\n|---|---|---|---|\n")
	for _, g := range goals {
		op, met := "≥", "no"
		if g.AtMost {
			op = "≤"
		}
		if g.Met {
			met = "yes"
		}
		fmt.Fprintf(&sb, "| %s | %s %s | %s %s %s | %s |\n", g.Figure, num(g.Value), g.Unit, op, num(g.Limit), g.Unit, met)
	}
	return sb.String()
}

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
