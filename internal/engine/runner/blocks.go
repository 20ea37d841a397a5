package runner

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/mongobench/mongobench/internal/spec/datagen"
	"github.com/mongobench/mongobench/internal/spec/workload"
)

// Block is one growth block: the intervals it spans and the size of the
// watched collection at its end.
type Block struct {
	// Index counts blocks from 0.
	Index int

	// Start and End bound the block.
	Start, End time.Time

	// FirstInterval and EndInterval are the registry's interval indexes
	// of the block: [FirstInterval, EndInterval). Block ends are interval
	// boundaries, so per-block statistics are exact merges of intervals.
	FirstInterval, EndInterval int

	// Size is the watched collection's size at the block's end.
	Size CollectionSize

	// Complete is false for a block cut short by a stop.
	Complete bool
}

// CollectionSize is what collStats says about a collection.
type CollectionSize struct {
	// Collection is the collection's name.
	Collection string

	// Documents is the number of documents.
	Documents int64

	// DataBytes is the uncompressed size of the documents.
	DataBytes int64

	// StorageBytes is the space allocated for the documents.
	StorageBytes int64

	// IndexBytes is the total size of the collection's indexes.
	IndexBytes int64

	// Note says what is missing when collStats failed but the documents
	// could still be counted.
	Note string

	// Error is set when the server could not tell even the count.
	Error string
}

// BlockObserver is optionally implemented by an Observer that wants to hear
// about each finished growth block.
type BlockObserver interface {
	// Block is called after each block, from the executor's goroutine.
	Block(p Phase, b Block)
}

// blocks is the growth model: the phase's steps run in order as one block,
// each a fixed number of iterations at its own concurrency, and the block
// repeats until its until-condition holds. A tick closes the registry's
// interval at every block end, and the watched collection's size is read
// there, so latency can be plotted against size.
type blocks struct {
	engine *Engine
	spec   *workload.Blocks
	mixes  []*mix
	n      int
	result *PhaseResult
}

// newBlocks is the executor of a phase with growth blocks.
func newBlocks(ps *phaseSetup) Executor {
	spec := ps.spec.Blocks
	b := &blocks{engine: ps.engine, spec: spec, mixes: make([]*mix, len(spec.Steps)), n: 1, result: ps.result}

	for i, st := range spec.Steps {
		b.mixes[i] = newMix(ps.bound, st.Operations, st.Sequence, ps.weights)
		b.n = max(b.n, st.Concurrency)
	}

	return b
}

// Setup has nothing to hook: blocks tick at their own ends.
func (*blocks) Setup(*phaseRun) {}

// Run repeats the blocks until the until-condition holds or no new
// iteration may start.
func (bl *blocks) Run(ctx context.Context, pr *phaseRun) {
	e, spec := bl.engine, bl.spec

	// Workers keep their scope and recorders from step to step, so a long
	// growth run does not allocate per block.
	scopes := make([]*datagen.Scope, bl.n)
	hs := make([]handles, bl.n)

	for w := range bl.n {
		scopes[w] = e.Env.NewScope(w)
		hs[w] = pr.newHandles()
	}

	start := time.Now()

	for k := 0; pr.issueCtx.Err() == nil; k++ {
		blk := Block{Index: k, Start: time.Now(), FirstInterval: pr.reg.NumIntervals(), Complete: true}

		for i, st := range spec.Steps {
			var left atomic.Int64
			left.Store(st.Count)

			m := bl.mixes[i]

			workers(st.Concurrency, func(w int) {
				for pr.issueCtx.Err() == nil && left.Add(-1) >= 0 {
					if !pr.iteration(ctx, scopes[w], hs[w], m, time.Time{}) {
						return
					}
				}
			})
		}

		blk.End = time.Now()
		blk.Complete = pr.issueCtx.Err() == nil

		pr.tick(blk.End)

		blk.EndInterval = pr.reg.NumIntervals()
		blk.Size = e.collectionSize(ctx, spec.Until.Collection)
		bl.result.Blocks = append(bl.result.Blocks, blk)

		if pr.stream != nil {
			pr.stream.sink.Block(pr.phase, blk)
		}

		if o, ok := e.observer().(BlockObserver); ok {
			o.Block(pr.phase, blk)
		}

		u := spec.Until
		if (u.Documents > 0 && blk.Size.Documents >= u.Documents) ||
			(u.Duration > 0 && time.Since(start) >= u.Duration.D()) ||
			(u.Blocks > 0 && k+1 >= u.Blocks) {
			return
		}

		if u.Documents > 0 && blk.Size.Error != "" {
			// Without a size the condition can never be seen to hold.
			pr.cancel(&abortError{reason: "cannot read the size of collection " + u.Collection + ": " + blk.Size.Error})
			return
		}
	}
}

// collectionSize asks collStats, and falls back to counting documents on
// servers that lack it.
func (e *Engine) collectionSize(ctx context.Context, coll string) CollectionSize {
	cs := CollectionSize{Collection: coll}

	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.Timeout)
	defer cancel()

	var st struct {
		Count          int64 `bson:"count"`
		Size           int64 `bson:"size"`
		StorageSize    int64 `bson:"storageSize"`
		TotalIndexSize int64 `bson:"totalIndexSize"`
	}

	err := e.DB.RunCommand(ctx, bson.D{{Key: "collStats", Value: coll}}).Decode(&st)
	if err == nil {
		cs.Documents, cs.DataBytes, cs.StorageBytes, cs.IndexBytes = st.Count, st.Size, st.StorageSize, st.TotalIndexSize
		return cs
	}

	n, cerr := e.DB.Collection(coll).EstimatedDocumentCount(ctx)
	if cerr != nil {
		cs.Error = errors.Join(err, cerr).Error()
		return cs
	}

	cs.Documents = n
	cs.Note = "collStats failed (" + err.Error() + "); documents counted, sizes unknown"

	return cs
}
