package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mongobench/mongobench/internal/engine/op"
	"github.com/mongobench/mongobench/internal/lab/durability"
	"github.com/mongobench/mongobench/internal/results/result"
	"github.com/mongobench/mongobench/internal/targets"
)

// durabilityTimeout bounds one durability check: a launch, the writes up
// to the crash, the restart (crash recovery) and the read-back.
const durabilityTimeout = 10 * time.Minute

// durabilityPhase runs the workload's durability check, if it has one, on
// every target: a server of the target's kind and settings launched apart
// from the trials' (a crash would disturb them), crashed under load and
// restarted (see package durability). Variants are checked one by one only
// when their write concerns differ; a target that cannot be crashed gets a
// row saying why.
func (r *run) durabilityPhase(ctx context.Context, targetList []targets.TargetSpec) []result.Durability {
	base := r.plan.Base
	if base.Durability == nil {
		return nil
	}

	if len(targetList) == 0 {
		targetList = []targets.TargetSpec{targets.DefaultSpec(r.opts.URI)}
	}

	type check struct {
		variant string
		v       *Compiled
	}

	checks := []check{{v: r.plan.Variants[0]}}

	if wcLabels(r.plan.Variants) > 1 {
		checks = checks[:0]
		for _, v := range r.plan.Variants {
			checks = append(checks, check{variant: variantName(v.Spec), v: v})
		}
	}

	var out []result.Durability

	for _, ts := range targetList {
		for _, c := range checks {
			if ctx.Err() != nil {
				return out
			}

			d := r.durabilityCheck(ctx, ts, c.v)
			d.Variant = c.variant
			out = append(out, d)

			name := d.Target
			if d.Variant != "" {
				name += "/" + d.Variant
			}

			r.msg.Printf("Durability (%s, %s): %s.\n", name, d.WriteConcern, durabilityLine(&d))
		}
	}

	return out
}

// wcLabels counts the distinct write concerns of the variants' durability
// checks.
func wcLabels(variants []*Compiled) int {
	var labels []string

	for _, v := range variants {
		l := v.Spec.DurabilityWriteConcern().Label()
		if !slices.Contains(labels, l) {
			labels = append(labels, l)
		}
	}

	return len(labels)
}

// durabilityLine is a check's message after its answer: what was crashed
// and what the writes in flight did.
func durabilityLine(d *result.Durability) string {
	if d.Error != "" {
		return d.Answer()
	}

	return fmt.Sprintf("%s (%s); %d unacknowledged in flight, %d of them present; restart and read-back %.1fs",
		d.Answer(), d.Crash, d.Unacknowledged, d.UnacknowledgedPresent, d.RestartS)
}

// durabilityCheck launches a crashable server for ts and runs one check on
// it with v's write concern.
func (r *run) durabilityCheck(ctx context.Context, ts targets.TargetSpec, v *Compiled) result.Durability {
	spec := v.Spec
	wc := spec.DurabilityWriteConcern()
	d := result.Durability{Target: ts.Name, Kind: ts.Kind, WriteConcern: wc.Label()}

	if !slices.Contains(targets.CrashableKinds(), ts.Kind) {
		d.Error = fmt.Sprintf("a %s target is not crashed by mongobench (crashable kinds: %v); not verified here", ts.Kind, targets.CrashableKinds())
		return d
	}

	ctx, cancel := context.WithTimeout(ctx, durabilityTimeout)
	defer cancel()

	r.msg.Step("launching a %s server to crash for the durability check", ts.Kind)

	crashOpts := r.opts.Crash
	crashOpts.Logger = r.hooks.Logger

	srv, err := targets.LaunchCrashable(ctx, ts, crashOpts)
	if err != nil {
		d.Error = err.Error()
		return d
	}

	unhook := r.hooks.OnHardExit(func() { _ = srv.Stop() })

	defer func() {
		if err := srv.Stop(); err != nil {
			r.msg.Printf("Warning: stopping the durability check's server: %v\n", err)
		}

		unhook()
	}()

	d.Server, d.Crash = srv.Description, srv.Crash

	r.msg.Step("durability check on %s: writing until %d documents are acknowledged, then crashing the server", ts.Name, spec.Durability.Documents)

	got, err := durability.Check(ctx, srv, durability.Config{
		Database:     spec.Database,
		Collection:   spec.Durability.Collection,
		Documents:    spec.Durability.Documents,
		BatchSize:    spec.Durability.BatchSize,
		Writers:      spec.Durability.Writers(),
		WriteConcern: op.WriteConcern(wc),
	})

	got.Target, got.Kind, got.WriteConcern, got.Server, got.Crash = d.Target, d.Kind, d.WriteConcern, d.Server, d.Crash
	if err != nil {
		got.Error = err.Error()
	}

	return got
}
