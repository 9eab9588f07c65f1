package results

import (
	"errors"
	"fmt"
	"os"

	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/variants"
)

// Typed access to the run folder's single-file records. Each is read and
// written here only, so no stage re-declares another's file or its schema;
// the per-entry records have theirs beside them (LoadBuilds,
// LoadVerifications, LoadTrials, LoadReplicates).

// Machine is the record of the machine a run measured on (MachineFile).
type Machine = machine.Info

// Plan reads the plan the run was built from (PlanFile). The error wraps
// os.ErrNotExist when the run has none.
func (r *Run) Plan() (*variants.Plan, error) {
	var p variants.Plan
	if err := r.ReadJSON(PlanFile, &p); err != nil {
		return nil, fmt.Errorf("reading the run's plan: %w", err)
	}
	return &p, nil
}

// WritePlan records p as the run's plan.
func (r *Run) WritePlan(p *variants.Plan) error {
	if err := r.WriteJSON(PlanFile, p); err != nil {
		return fmt.Errorf("recording the run's plan: %w", err)
	}
	return nil
}

// Machine reads the machine the run measured on (MachineFile).
func (r *Run) Machine() (Machine, error) {
	var m Machine
	if err := r.ReadJSON(MachineFile, &m); err != nil {
		return m, fmt.Errorf("reading the run's machine: %w", err)
	}
	return m, nil
}

// WriteMachine records m as the machine the run measured on, without its
// flag list (the level says what history groups by).
func (r *Run) WriteMachine(m Machine) error {
	m.Flags = nil
	if err := r.WriteJSON(MachineFile, m); err != nil {
		return fmt.Errorf("recording the run's machine: %w", err)
	}
	return nil
}

// Ranking reads the run's ranking (RankingFile).
func (r *Run) Ranking() (*Ranking, error) {
	var rk Ranking
	if err := r.ReadJSON(RankingFile, &rk); err != nil {
		return nil, fmt.Errorf("reading the run's ranking: %w", err)
	}
	return &rk, nil
}

// WriteRanking records rk as the run's ranking.
func (r *Run) WriteRanking(rk *Ranking) error {
	if err := r.WriteJSON(RankingFile, rk); err != nil {
		return fmt.Errorf("recording the run's ranking: %w", err)
	}
	return nil
}

// Publications reads every publication recorded for the run (none when
// it was never published).
func (r *Run) Publications() ([]Published, error) {
	var p Publications
	if err := r.ReadJSON(PublishedFile, &p); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the run's publications: %w", err)
	}
	return p.Publications, nil
}

// AppendPublication adds pub to the run's publications, atomically.
func (r *Run) AppendPublication(pub Published) error {
	prev, err := r.Publications()
	if err != nil {
		return err
	}
	return r.WriteJSON(PublishedFile, Publications{Publications: append(prev, pub)})
}
