package datagen

import (
	"math/rand/v2"

	"github.com/brianvoe/gofakeit/v7"
)

// Seed domains keep the random sources of workers and of pools apart.
const (
	domainWorker = iota + 1
	domainPool
)

// Scope is one worker's generator state: its own rand source seeded from
// (env seed, worker index), its gofakeit Faker, and the per-iteration cache
// of variable values. Not safe for concurrent use: one per worker goroutine.
type Scope struct {
	rng   *rand.Rand
	faker *gofakeit.Faker

	iter    uint64   // current iteration, from 1
	varIter []uint64 // iteration in which varVal[i] was generated
	varVal  []any

	zipfs []*rand.Zipf // by zipfGen.id, made on first use
	zetas []*zipfLocal // by zipfian.id, made on first use
}

// zeta returns the Scope's cached normalizing sum of Zipfian id.
func (s *Scope) zeta(id int) *zipfLocal {
	if id >= len(s.zetas) {
		s.zetas = append(s.zetas, make([]*zipfLocal, id+1-len(s.zetas))...)
	}

	l := s.zetas[id]
	if l == nil {
		l = new(zipfLocal)
		s.zetas[id] = l
	}

	return l
}

// NewScope returns the generator state of worker number worker. Scopes of
// Envs with the same seed and the same worker number generate the same
// values, so runs can be repeated.
func (e *Env) NewScope(worker int) *Scope {
	return e.newScope(domainWorker, uint64(worker), uint64(e.shard.index))
}

// newScope returns a Scope whose random sources are seeded from the Env seed
// and a, b within domain.
func (e *Env) newScope(domain, a, b uint64) *Scope {
	seed := uint64(e.seed)
	k := func(i uint64) uint64 { return mix(seed, domain, a, b, i) }

	return &Scope{
		rng: rand.New(rand.NewPCG(k(1), k(2))),
		// gofakeit.New(0) would seed from crypto/rand and locks a mutex on
		// every call; a Scope needs neither.
		faker:   gofakeit.NewFaker(rand.NewPCG(k(3), k(4)), false),
		iter:    1,
		varIter: make([]uint64, len(e.varList)),
		varVal:  make([]any, len(e.varList)),
	}
}

// NextIteration forgets the cached variable values, so that the next ^var
// reference generates a fresh value. The engine calls it once per iteration
// (one operation in a weighted mix, or one pass through a sequence) — that
// is how "search for the error just created" works: both operations
// reference ^var: msg in the same iteration.
func (s *Scope) NextIteration() { s.iter++ }

// Float64 returns a random number in [0, 1) from the worker's source, for
// the engine to pick weighted operations reproducibly.
func (s *Scope) Float64() float64 { return s.rng.Float64() }

// IntN returns a random number in [0, n) from the worker's source; it
// panics if n <= 0.
func (s *Scope) IntN(n int) int { return s.rng.IntN(n) }

// zipf returns the Scope's Zipf distribution for g.
func (s *Scope) zipf(g *zipfGen) *rand.Zipf {
	if g.id >= len(s.zipfs) {
		s.zipfs = append(s.zipfs, make([]*rand.Zipf, g.id+1-len(s.zipfs))...)
	}

	z := s.zipfs[g.id]
	if z == nil {
		z = rand.NewZipf(s.rng, g.s, 1, g.imax)
		s.zipfs[g.id] = z
	}

	return z
}

// mix hashes vals into one seed with SplitMix64 steps, so that nearby
// inputs (worker 1 and 2) give unrelated random sources.
func mix(vals ...uint64) uint64 {
	h := uint64(0x9e3779b97f4a7c15)

	for _, v := range vals {
		h ^= v
		h += 0x9e3779b97f4a7c15
		h = (h ^ h>>30) * 0xbf58476d1ce4e5b9
		h = (h ^ h>>27) * 0x94d049bb133111eb
		h ^= h >> 31
	}

	return h
}
