package datagen

import (
	"math"
	"sync"
	"sync/atomic"

	"go.yaml.in/yaml/v4"
)

// Key distributions: the generators that pick which record an operation
// touches, in the manner of the YCSB core workloads. Each draws an integer
// from a key range that is either fixed, [min, max], or live, [min, newest]
// where newest is the last value a named ^seq counter has handed out, so
// that reads reach the records inserted during the run.

func init() {
	generators["^uniform"] = &spec{args: []string{"min", "max", "counter"}, compile: compileUniform}
	generators["^zipfian"] = &spec{args: []string{"min", "max", "counter", "theta", "scrambled", "keys"}, compile: compileZipfian}
	generators["^latest"] = &spec{args: []string{"min", "max", "counter", "theta", "ycsb"}, compile: compileLatest}
	generators["^exponential"] = &spec{args: []string{"min", "max", "counter", "percentile", "fraction"}, compile: compileExponential}
	generators["^sequential"] = &spec{args: []string{"min", "max", "counter"}, compile: compileSequential}
}

// DefaultTheta is the skew of ^zipfian and ^latest: YCSB's zipfian constant.
const DefaultTheta = 0.99

// keyRange is the range a key distribution draws from.
type keyRange struct {
	lo, hi int64         // hi is used when live is nil
	live   *atomic.Int64 // a named counter: hi is its value minus one
	from   *named        // the counter whose start is lo, when min is not given
}

// bounds returns the low end and the number of keys, at least 1 (a live
// range over an empty counter yields its low end).
func (r *keyRange) bounds() (lo int64, n uint64) {
	if r.from != nil {
		r := *r
		r.lo, r.from = r.from.start, nil

		return r.bounds()
	}

	hi := r.hi
	if r.live != nil {
		hi = r.live.Load() - 1
	}

	if hi < r.lo {
		return r.lo, 1
	}

	return r.lo, uint64(hi) - uint64(r.lo) + 1
}

// intRange is the range's extent when it is fixed.
func (r *keyRange) intRange() (lo, hi int64, ok bool) {
	if r.live != nil {
		return 0, 0, false
	}

	return r.lo, r.hi, true
}

// keyRangeArgs reads min and either max or counter.
func (k *call) keyRangeArgs() keyRange {
	lo := k.int("min", 0)
	name := k.args["counter"]

	switch {
	case name != nil && k.args["max"] != nil:
		k.errorf(name, "give either max (a fixed key range) or counter (a live one), not both")
	case name != nil:
		if name.Kind != yaml.ScalarNode || name.ShortTag() != "!!str" || name.Value == "" {
			k.errorf(name, "counter must be the name of a ^seq counter, got %s", describe(name))

			return keyRange{}
		}

		nc := k.c.env.namedCounter(name.Value)
		if nc.ref == nil {
			nc.ref, nc.refPath = name, k.path
		}

		if k.args["min"] == nil {
			// The counter's start, known once every template is compiled.
			return keyRange{live: nc.ctr, from: nc}
		}

		return keyRange{lo: lo, live: nc.ctr}
	case k.args["max"] == nil:
		k.errorf(k.key, "missing argument max (or counter, for a live key range)")
	}

	hi := k.int("max", 0)
	if k.ok && lo > hi {
		k.errorf(k.at("min"), "min must be <= max")
	}

	return keyRange{lo: lo, hi: hi}
}

// uniformGen draws keys uniformly.
type uniformGen struct{ keyRange }

func compileUniform(k *call) *compiled {
	r := k.keyRangeArgs()
	if !k.ok {
		return nil
	}

	return &compiled{gen: &uniformGen{r}, elems: 1}
}

func (g *uniformGen) value(s *Scope) any {
	lo, n := g.bounds()

	return lo + int64(uniform(s, n-1))
}

// sequentialGen hands out the keys of its range in order, wrapping around,
// across all workers.
type sequentialGen struct {
	keyRange
	next atomic.Uint64
	env  *Env
}

func compileSequential(k *call) *compiled {
	r := k.keyRangeArgs()
	if !k.ok {
		return nil
	}

	return &compiled{gen: &sequentialGen{keyRange: r, env: k.c.env}, elems: 1}
}

// value hands out the range's keys in order; in shard i of n (Env.Shard)
// only every n-th, from the i-th, so shards walk disjoint keys.
func (g *sequentialGen) value(*Scope) any {
	lo, n := g.bounds()
	k := (g.next.Add(1)-1)*uint64(g.env.shardCount()) + uint64(g.env.shard.index)

	return lo + int64(k%n)
}

// zipfian draws ranks 0..n-1 with probability proportional to
// 1/(rank+1)^theta, with the method of Gray et al., "Quickly Generating
// Billion-Record Synthetic Databases" (SIGMOD 1994), which YCSB uses: one
// uniform number and one power per draw, after the normalizing sum
// zeta(n) = sum of 1/i^theta for i in 1..n has been computed. That sum
// costs O(n) once; when n grows (a live range) it is extended, not redone.
type zipfian struct {
	id    int // index of the Scope's zeta state
	theta float64
	alpha float64 // 1/(1-theta)
	zeta2 float64 // zeta(2)
	half  float64 // 0.5^theta

	// shared is the largest zeta computed by any worker, so that each
	// worker does not sum a large range again from 1.
	shared atomic.Pointer[zetaState]
	mu     sync.Mutex

	// staleEta makes the constant eta keep the item count of the first
	// draw (etaItems) as the count grows, as YCSB's ZipfianGenerator
	// does: it extends zetan to the new count but computes eta from the
	// count it was built with. See latestGen.
	staleEta bool
	etaItems atomic.Uint64
}

// zetaState is zeta(n) for one n.
type zetaState struct {
	n    uint64
	zeta float64
}

func newZipfian(e *Env, theta float64) *zipfian {
	z := &zipfian{id: e.zetas, theta: theta, alpha: 1 / (1 - theta), half: math.Pow(0.5, theta)}
	e.zetas++
	z.zeta2 = 1 + z.half

	return z
}

// prepare computes the normalizing sum of a fixed range now, when the
// template is compiled, rather than in the first draws of the run.
func (z *zipfian) prepare(r keyRange) *zipfian {
	if r.live == nil {
		if _, n := r.bounds(); n > 1 {
			z.extend(new(zipfLocal), n)
		}
	}

	return z
}

// zipfLocal is a worker's cached zeta and the constant derived from it.
type zipfLocal struct {
	zetaState
	eta float64
}

// zipfRank turns a uniform draw u into a Zipfian rank over n items by the
// method of Gray et al. (YCSB's ZipfianGenerator): ranks 0 and 1 exactly,
// the rest from the closed-form approximation. zetan is ζ(n), zeta2 ζ(2),
// eta and alpha the method's constants.
func zipfRank(u, zetan, zeta2, eta, alpha, n float64) uint64 {
	uz := u * zetan

	switch {
	case uz < 1:
		return 0
	case uz < zeta2:
		return 1
	}

	return uint64(n * math.Pow(eta*u-eta+1, alpha))
}

// rank draws a rank in [0, n).
func (z *zipfian) rank(s *Scope, n uint64) uint64 {
	if n == 1 {
		return 0
	}

	l := s.zeta(z.id)
	if l.n != n {
		z.extend(l, n)
	}

	r := zipfRank(s.rng.Float64(), l.zeta, z.zeta2, l.eta, z.alpha, float64(n))
	if r >= n { // rounding at the top end
		r = n - 1
	}

	return r
}

// extend brings the worker's zeta to n. It starts from the shared one
// when that is closer, and works under the lock, so that when every worker
// needs a large sum at once (the first draws after a load) one computes it
// and the others take it.
func (z *zipfian) extend(l *zipfLocal, n uint64) {
	if sh := z.shared.Load(); sh != nil && sh.n == n {
		l.zetaState = *sh
	} else {
		z.mu.Lock()

		if l.n > n {
			l.zetaState = zetaState{}
		}

		if sh := z.shared.Load(); sh != nil && sh.n <= n && sh.n > l.n {
			l.zetaState = *sh
		}

		l.zeta = zetaSum(l.zeta, l.n, n, z.theta)
		l.n = n

		if sh := z.shared.Load(); sh == nil || sh.n < n {
			z.shared.Store(&zetaState{n: n, zeta: l.zeta})
		}

		z.mu.Unlock()
	}

	items := n
	if z.staleEta {
		z.etaItems.CompareAndSwap(0, n)
		items = z.etaItems.Load()
	}

	l.eta = (1 - math.Pow(2/float64(items), 1-z.theta)) / (1 - z.zeta2/l.zeta)
}

// exactZeta is how far zetaSum adds terms one by one: beyond, it adds the
// rest by the Euler-Maclaurin formula, whose first omitted term is below
// 1e-19 there, so that a range of billions of keys costs no more than one
// of a million.
const exactZeta = 1 << 20

// zetaSum returns zeta + the sum of i^-theta for i in from+1..to.
func zetaSum(zeta float64, from, to uint64, theta float64) float64 {
	i := from + 1
	for ; i <= to && i <= exactZeta; i++ {
		zeta += math.Pow(float64(i), -theta)
	}

	if i > to {
		return zeta
	}

	// The sum of f(k) for k in m+1..to, with f(x) = x^-theta and m = i-1:
	// the integral of f from m to to, plus (f(to) - f(m))/2, plus
	// (f'(to) - f'(m))/12.
	m, t := float64(i-1), float64(to)
	f := func(x float64) float64 { return math.Pow(x, -theta) }
	df := func(x float64) float64 { return -theta * math.Pow(x, -theta-1) }

	return zeta + (math.Pow(t, 1-theta)-math.Pow(m, 1-theta))/(1-theta) + (f(t)-f(m))/2 + (df(t)-df(m))/12
}

// theta reads and checks the skew argument.
func (k *call) theta() float64 {
	t := k.float("theta", DefaultTheta)

	switch {
	case !k.ok:
	case t <= 0:
		k.errorf(k.at("theta"), "theta must be > 0, got %g", t)
	case t == 1:
		k.errorf(k.at("theta"), "theta must not be exactly 1 (the generator divides by 1 - theta); use 0.999 or 1.001")
	case t > 20:
		k.errorf(k.at("theta"), "theta must be at most 20 (beyond that every draw is the first key), got %g", t)
	}

	return t
}

// zipfianGen draws keys with a Zipfian distribution: min most often, or,
// scrambled, keys spread over the range as YCSB's ScrambledZipfianGenerator
// spreads them (see scrambler).
type zipfianGen struct {
	keyRange
	z *zipfian   // not scrambled
	s *scrambler // scrambled
	// keys, when not 0, is the fixed number of keys from min that a
	// scrambled draw folds its rank onto; keys beyond the range (beyond
	// the newest of a live one) are drawn again. YCSB sizes it for the
	// records and the inserts it expects, so that the hot keys do not move
	// as inserts grow the key space. When 0, the draw folds onto the range
	// as it is, which moves the hot keys whenever a live range grows.
	keys uint64
}

func compileZipfian(k *call) *compiled {
	r := k.keyRangeArgs()
	theta := k.theta()
	scrambled := false

	if n := k.args["scrambled"]; n != nil {
		if err := n.Decode(&scrambled); err != nil || n.ShortTag() != "!!bool" {
			k.errorf(n, "scrambled must be true or false, got %s", describe(n))
		}
	}

	var keys int64
	if n := k.args["keys"]; n != nil {
		keys = k.intIn("keys", 0, 1, math.MaxInt64)
		if k.ok && !scrambled {
			k.errorf(n, "keys applies to a scrambled zipfian (scrambled: true)")
		}
	}

	if !k.ok {
		return nil
	}

	if scrambled {
		return &compiled{gen: &zipfianGen{keyRange: r, s: newScrambler(theta), keys: uint64(keys)}, elems: 1}
	}

	return &compiled{gen: &zipfianGen{keyRange: r, z: newZipfian(k.c.env, theta).prepare(r)}, elems: 1}
}

func (g *zipfianGen) value(s *Scope) any {
	lo, n := g.bounds()

	if g.s == nil {
		return lo + int64(g.z.rank(s, n))
	}

	if g.keys == 0 {
		return lo + int64(g.s.key(s, n))
	}

	// YCSB's CoreWorkload.nextKeynum: draw again while the key is not
	// inserted yet.
	for range maxScrambleRedraws {
		if key := g.s.key(s, g.keys); key < n {
			return lo + int64(key)
		}
	}

	return lo + int64(g.s.key(s, min(n, g.keys)))
}

// fnv64 is the 64-bit FNV-1a hash of the eight bytes of v, low byte first
// (the hash of YCSB's Utils.fnvhash64 before its absolute value: see
// ycsbHash).
func fnv64(v uint64) uint64 {
	h := uint64(0xcbf29ce484222325)

	for range 8 {
		h ^= v & 0xff
		h *= 0x100000001b3
		v >>= 8
	}

	return h
}

// latestGen draws keys with a Zipfian distribution over recency: the newest
// key of the range most often, then the one before, and so on.
//
// With ycsb, it draws as YCSB's SkewedLatestGenerator does, which departs
// from that distribution in two ways: the rank is drawn over the keys but
// the oldest (YCSB subtracts a rank in [0, newest) from the newest key
// number, so key min is never drawn), and, as the key count grows, the
// ZipfianGenerator under it extends its normalizing sum but keeps the
// constant eta of the count it was built with, which shifts draws from
// the newest keys to older ones (at twice the first count, the 10 newest
// keys of 2,000 take 29.6% of the draws instead of 36.4%).
type latestGen struct {
	keyRange
	z    *zipfian
	ycsb bool
}

func compileLatest(k *call) *compiled {
	r := k.keyRangeArgs()
	theta := k.theta()
	ycsb := false

	if n := k.args["ycsb"]; n != nil {
		if err := n.Decode(&ycsb); err != nil || n.ShortTag() != "!!bool" {
			k.errorf(n, "ycsb must be true or false, got %s", describe(n))
		}
	}

	if !k.ok {
		return nil
	}

	z := newZipfian(k.c.env, theta)
	z.staleEta = ycsb

	if !ycsb {
		z.prepare(r)
	}

	return &compiled{gen: &latestGen{keyRange: r, z: z, ycsb: ycsb}, elems: 1}
}

func (g *latestGen) value(s *Scope) any {
	lo, n := g.bounds()

	if g.ycsb {
		if n < 2 {
			return lo
		}

		return lo + int64(n-1-g.z.rank(s, n-1))
	}

	return lo + int64(n-1-g.z.rank(s, n))
}

// exponentialGen draws keys at an exponentially distributed distance from
// the newest one: percentile % of the draws fall within the newest fraction
// of the range. Draws beyond the oldest key are drawn again.
type exponentialGen struct {
	keyRange
	percentile, fraction float64
}

func compileExponential(k *call) *compiled {
	r := k.keyRangeArgs()
	p := k.float("percentile", 95)
	f := k.float("fraction", 0.8571428571428571)

	if k.ok && (p <= 0 || p >= 100) {
		k.errorf(k.at("percentile"), "percentile must be > 0 and < 100, got %g", p)
	}

	if k.ok && (f <= 0 || f > 1) {
		k.errorf(k.at("fraction"), "fraction must be > 0 and <= 1, got %g", f)
	}

	if !k.ok {
		return nil
	}

	return &compiled{gen: &exponentialGen{keyRange: r, percentile: p, fraction: f}, elems: 1}
}

// maxRedraws bounds the redraws of ^exponential; past it the draw is the
// oldest key. With the defaults a draw falls outside 3% of the time, so the
// bound is never reached in practice.
const maxRedraws = 64

func (g *exponentialGen) value(s *Scope) any {
	lo, n := g.bounds()
	// The rate that puts percentile % of the mass below fraction*n.
	rate := -math.Log(1-g.percentile/100) / (g.fraction * float64(n))

	d := n - 1
	for range maxRedraws {
		x := -math.Log(1-s.rng.Float64()) / rate
		if x < float64(n) {
			d = uint64(x)

			break
		}
	}

	return lo + int64(n-1-d)
}

// liveHotspotGen is ^hotspot over a live range: the hot part is the first
// hot_fraction of the keys inserted so far.
type liveHotspotGen struct {
	keyRange
	frac, p float64
}

func (g *liveHotspotGen) value(s *Scope) any {
	lo, n := g.bounds()
	hot := uint64(max(math.Floor(g.frac*float64(n)), 1))

	if hot >= n || s.rng.Float64() < g.p {
		return lo + int64(uniform(s, hot-1))
	}

	return lo + int64(hot) + int64(uniform(s, n-hot-1))
}
