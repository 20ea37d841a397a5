package usl

import "math"

// params are the model's coefficients in a fixed order, so the solver can
// treat them as a vector: 0 λ, 1 σ, 2 κ.
type params [3]float64

const (
	pLambda = iota
	pSigma
	pKappa
)

// model is X(N) for p. With σ, κ ≥ 0 and N ≥ 1 the denominator is at
// least 1, so the model is defined everywhere the solver may step.
func model(p params, n float64) float64 {
	return p[pLambda] * n / (1 + p[pSigma]*(n-1) + p[pKappa]*n*(n-1))
}

// sse is the sum of squared residuals of p on (ns, xs).
func sse(p params, ns, xs []float64) float64 {
	s := 0.0

	for i, n := range ns {
		r := xs[i] - model(p, n)
		s += r * r
	}

	return s
}

// faces are the parameter sets the solver frees in turn: λ always, σ and
// κ either free or held at their bound 0. The bounded minimum lies in the
// relative interior of one face, where it is an unbounded local minimum of
// that face; solving every face and keeping the best is an exact active-set
// method that needs no multiplier bookkeeping, and with three parameters it
// is only four small solves. Simplest first, so an equally good simpler
// model wins (see fitLS).
var faces = [4][3]bool{
	{true, false, false},
	{true, true, false},
	{true, false, true},
	{true, true, true},
}

// fitLS returns the bounded least-squares fit (λ > 0, σ, κ ≥ 0) of the
// model to (ns, xs) from start, and its sum of squared residuals. sst
// scales "equally good": a richer face replaces a simpler one only when it
// lowers the squared error by more than 1e-12 of the data's spread, so exact
// data from a κ = 0 curve come out with κ = 0, not 1e-13.
func fitLS(ns, xs []float64, start params, sst float64) (params, float64) {
	tol := 1e-12 * sst
	best, bestSSE := params{}, math.Inf(1)

	for _, free := range faces {
		p := start
		for j := range p {
			if !free[j] {
				p[j] = 0
			}
		}

		p, s := levenbergMarquardt(ns, xs, p, free)
		if s < bestSSE-tol {
			best, bestSSE = p, s
		}
	}

	return best, bestSSE
}

// levenbergMarquardt minimises the squared error over the free parameters
// from p, with Marquardt's scaling (the damping is proportional to the
// diagonal of JᵀJ), which makes the steps independent of the parameters'
// very different scales (λ in thousands, κ in 1e-4). A step that leaves
// the bounds is projected back onto them; a face whose unbounded minimum is
// outside the bounds thus ends on a smaller face, which fitLS also solves.
func levenbergMarquardt(ns, xs []float64, p params, free [3]bool) (params, float64) {
	idx := make([]int, 0, 3)

	for j, f := range free {
		if f {
			idx = append(idx, j)
		}
	}

	k := len(idx)
	cur := sse(p, ns, xs)
	mu := 1e-3

	for iter := 0; iter < 500 && cur > 0; iter++ {
		var a [3][3]float64 // JᵀJ over the free parameters

		var g [3]float64 // Jᵀr

		for i, n := range ns {
			d := 1 + p[pSigma]*(n-1) + p[pKappa]*n*(n-1)
			r := xs[i] - p[pLambda]*n/d
			full := [3]float64{n / d, -p[pLambda] * n * (n - 1) / (d * d), -p[pLambda] * n * n * (n - 1) / (d * d)}

			for u, ju := range idx {
				g[u] += full[ju] * r
				for v, jv := range idx {
					a[u][v] += full[ju] * full[jv]
				}
			}
		}

		improved := false

		for mu < 1e20 {
			m := a
			for u := range k {
				if m[u][u] == 0 {
					m[u][u] = mu
				} else {
					m[u][u] *= 1 + mu
				}
			}

			step, ok := solve(m, g, k)
			if !ok {
				mu *= 10

				continue
			}

			q := p
			for u, j := range idx {
				q[j] += step[u]
			}

			q[pSigma] = math.Max(q[pSigma], 0)
			q[pKappa] = math.Max(q[pKappa], 0)

			if q[pLambda] <= 0 {
				q[pLambda] = p[pLambda] / 10
			}

			s := sse(q, ns, xs)
			if s < cur {
				moved := relChange(p, q)
				p, cur, improved = q, s, true
				mu = math.Max(mu/10, 1e-12)

				if moved < 1e-13 {
					return p, cur
				}

				break
			}

			mu *= 10
		}

		if !improved {
			break // no step lowers the error: a minimum to working precision
		}
	}

	return p, cur
}

// relChange is the largest relative change of a parameter from p to q.
func relChange(p, q params) float64 {
	m := 0.0

	for j := range p {
		if d := math.Abs(q[j] - p[j]); d > 0 {
			m = math.Max(m, d/math.Max(math.Abs(p[j]), math.Abs(q[j])))
		}
	}

	return m
}

// solve solves the k×k system m·x = b (k ≤ 3) by Gaussian elimination with
// partial pivoting; false when m is singular.
func solve(m [3][3]float64, b [3]float64, k int) ([3]float64, bool) {
	var x [3]float64

	for c := range k {
		piv := c
		for r := c + 1; r < k; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[piv][c]) {
				piv = r
			}
		}

		if m[piv][c] == 0 || math.IsNaN(m[piv][c]) {
			return x, false
		}

		m[c], m[piv] = m[piv], m[c]
		b[c], b[piv] = b[piv], b[c]

		for r := c + 1; r < k; r++ {
			f := m[r][c] / m[c][c]
			for cc := c; cc < k; cc++ {
				m[r][cc] -= f * m[c][cc]
			}

			b[r] -= f * b[c]
		}
	}

	for r := k - 1; r >= 0; r-- {
		s := b[r]
		for cc := r + 1; cc < k; cc++ {
			s -= m[r][cc] * x[cc]
		}

		x[r] = s / m[r][r]
	}

	return x, true
}

// linearStart is Gunther's linearisation: with C(N) = X(N)/X(1) the
// model reads N/C − 1 = σ(N−1) + κN(N−1), a quadratic through the origin
// fitted by ordinary least squares. X(1) is the mean throughput at N = 1
// when measured, otherwise max X/N (λ is at least the best per-worker
// throughput seen). Negative coefficients are clamped to 0. It is only a
// start: least squares on N/C weighs the points differently from least
// squares on X, and noise at N = 1 enters every term.
func linearStart(ns, xs []float64) params {
	lambda, one, count := 0.0, 0.0, 0

	for i, n := range ns {
		lambda = math.Max(lambda, xs[i]/n)
		if n == 1 {
			one += xs[i]
			count++
		}
	}

	if count > 0 {
		lambda = one / float64(count)
	}

	var saa, sab, sbb, say, sby float64

	for i, n := range ns {
		a, b := n-1, n*(n-1)
		y := n/(xs[i]/lambda) - 1
		saa += a * a
		sab += a * b
		sbb += b * b
		say += a * y
		sby += b * y
	}

	p := params{lambda, 0, 0}

	det := saa*sbb - sab*sab
	if det > 0 {
		p[pSigma] = (say*sbb - sby*sab) / det
		p[pKappa] = (saa*sby - sab*say) / det
	}

	switch {
	case det <= 0 || (p[pSigma] < 0 && p[pKappa] < 0):
		p[pSigma], p[pKappa] = 0, 0
	case p[pSigma] < 0:
		p[pSigma], p[pKappa] = 0, math.Max(sby/sbb, 0)
	case p[pKappa] < 0:
		p[pSigma], p[pKappa] = math.Max(say/saa, 0), 0
	}

	return p
}
