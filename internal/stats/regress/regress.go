// Package regress fits a straight line y = a + b·x by least squares and
// gives the slope b a confidence interval, to answer "does y grow with x,
// and by how much": how an operation's latency grows as a collection grows,
// one point per growth block.
//
// # Method
//
// The slope is the ordinary least-squares estimate. Line gives it the
// classical t-interval, b ± t(1−α/2, n−2)·se(b), se(b) = s/√Σ(x−x̄)², with s²
// the residuals' variance on n−2 degrees of freedom; SerialLine, which the
// growth verdict uses, the same with n−2 replaced by n_eff−2 for points in
// sequence whose residuals are autocorrelated (below).
//
// Why this interval, and on what points. A growth run's natural
// observations are its blocks: each block's percentile summarises
// thousands of operations that ran against one state of the collection, so
// one block is one point (x = the collection's size at its end, y = the
// block's percentile). The operations inside a block are not independent
// observations of a size (they share the block's state and the machine's
// load at that time), so fitting them one by one would shrink the interval
// by √(operations per block) for nothing.
//
// # Points in sequence: SerialLine
//
// Across blocks, the classical interval (Line) assumes independent
// residuals. Blocks run one after another, and a collection grows only
// with time, so a drift of the machine's load over a run is shared by
// neighbouring blocks and reads as a slope: measured against a server that
// does not grow, Line's 95% interval called 7–8% of fits growing or
// shrinking (docs/workloads.md, growth verdict). A block bootstrap would
// need far more blocks than a run has (10 by default), and a
// heteroscedasticity-and-autocorrelation (Newey–West) standard error is
// itself too small on 8 to 10 points (its 95% interval held a flat slope
// in only about 87% of simulated independent series when this was
// designed). SerialLine instead counts the points as fewer when their
// residuals are autocorrelated, the effective-sample-size correction used
// for trends in short climate series (Santer et al. 2008, Int. J.
// Climatol. 28:1703): with r the residuals' lag-1 autocorrelation,
// n_eff = n(1−r)/(1+r), the residual variance on n_eff−2 degrees of
// freedom and t on n_eff−2 (n_eff at least 3: one degree of freedom).
// Residuals of a
// fitted line are negatively autocorrelated even when the errors are
// independent (E[r] = −2/n for evenly spaced x), which would make the
// correction too weak on short series; so r is taken relative to its
// exact expectation under independence, and only autocorrelation beyond
// what the fit itself induces counts. The price is paid on independent
// errors: there the interval holds the true slope about 97% of the time
// rather than 95% (TestSerialLineCoverage), and a small real slope is found
// less often (docs/workloads.md, growth verdict, has both rates measured).
package regress

import (
	"errors"
	"math"
)

// MinPoints is the fewest points a slope's interval needs: two points fit
// any line exactly and leave no residual to estimate the spread from.
const MinPoints = 3

// Fit is a straight line fitted by least squares, with its slope's
// confidence interval.
type Fit struct {
	// N is the number of points fitted.
	N int
	// Intercept and Slope define the line y = Intercept + Slope·x.
	Intercept, Slope float64
	// SE is the slope's standard error.
	SE float64
	// Lo and Hi bound the slope's confidence interval at level 1−Alpha.
	Lo, Hi float64
	// Alpha is the significance level of the interval (0.05 for 95%).
	Alpha float64
	// R1 is the residuals' lag-1 autocorrelation in the order the points
	// were given (SerialLine; 0 from Line).
	R1 float64
	// NEff is the number of independent points the interval counted the
	// N points as: N from Line, at most N and at least MinPoints from
	// SerialLine. Its degrees of freedom are NEff−2.
	NEff float64
}

// Trend is which way the slope goes, judged by its interval.
type Trend int

const (
	// Flat means the interval includes 0: no growth was detected.
	Flat Trend = iota
	// Grows means the whole interval is above 0.
	Grows
	// Shrinks means the whole interval is below 0.
	Shrinks
)

// Trend judges the slope by its interval alone, so the words and the
// interval never disagree.
func (f Fit) Trend() Trend {
	switch {
	case f.Lo > 0:
		return Grows
	case f.Hi < 0:
		return Shrinks
	default:
		return Flat
	}
}

// At is the fitted line's value at x.
func (f Fit) At(x float64) float64 { return f.Intercept + f.Slope*x }

// Errors of Line.
var (
	ErrTooFew    = errors.New("too few points for a slope's interval")
	ErrSameX     = errors.New("every point has the same x: no slope can be fitted")
	ErrMismatch  = errors.New("x and y differ in length")
	ErrBadAlpha  = errors.New("alpha must be between 0 and 1")
	ErrNotFinite = errors.New("a point is not a finite number")
)

// Line fits y = a + b·x by least squares and gives b its t-interval at
// level 1−alpha, for points with independent errors. It needs MinPoints
// points with at least two distinct x.
func Line(x, y []float64, alpha float64) (Fit, error) {
	f, res, sxx, err := leastSquares(x, y, alpha)
	if err != nil {
		return f, err
	}

	f.NEff = float64(f.N)
	f.interval(sumSquares(res), sxx)

	return f, nil
}

// SerialLine fits y = a + b·x by least squares, like Line, for points
// given in the order they were observed (a growth run's blocks), whose
// errors may be autocorrelated: the slope's interval counts the points as
// NEff ≤ N independent ones, from the residuals' lag-1 autocorrelation
// beyond that expected of independent errors (the package comment says
// why). It needs MinPoints points with at least two distinct x.
func SerialLine(x, y []float64, alpha float64) (Fit, error) {
	f, res, sxx, err := leastSquares(x, y, alpha)
	if err != nil {
		return f, err
	}

	sse := sumSquares(res)
	n := float64(f.N)
	f.NEff = n

	if sse > 0 {
		var lag float64
		for i := 1; i < len(res); i++ {
			lag += res[i] * res[i-1]
		}

		f.R1 = lag / sse
		if excess := f.R1 - nullR1(x); excess > 0 {
			f.NEff = math.Max(MinPoints, math.Min(n, n*(1-excess)/(1+excess)))
		}
	}

	f.interval(sse, sxx)

	return f, nil
}

// nullR1 is the expected lag-1 autocorrelation of a least-squares line's
// residuals when the errors are independent and of equal variance:
// tr(M·L)/(n−2), with M = I − H the residual projection and L the matrix
// picking neighbours (i, i−1). It is exact for normal errors (the ratio of
// quadratic forms is independent of the residuals' length) and −2/n for
// evenly spaced x.
func nullR1(x []float64) float64 {
	n := float64(len(x))

	var mx float64
	for _, v := range x {
		mx += v
	}

	mx /= n

	var sxx float64
	for _, v := range x {
		sxx += (v - mx) * (v - mx)
	}

	var tr float64
	for i := 1; i < len(x); i++ {
		tr -= 1/n + (x[i]-mx)*(x[i-1]-mx)/sxx
	}

	return tr / (n - 2)
}

// leastSquares checks the points and fits the line, returning it with
// its residuals and Σ(x−x̄)².
func leastSquares(x, y []float64, alpha float64) (Fit, []float64, float64, error) {
	if len(x) != len(y) {
		return Fit{}, nil, 0, ErrMismatch
	}

	if !(alpha > 0 && alpha < 1) {
		return Fit{}, nil, 0, ErrBadAlpha
	}

	n := len(x)
	if n < MinPoints {
		return Fit{N: n, Alpha: alpha}, nil, 0, ErrTooFew
	}

	var mx, my float64

	for i := range x {
		if math.IsNaN(x[i]) || math.IsInf(x[i], 0) || math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return Fit{}, nil, 0, ErrNotFinite
		}

		mx += x[i]
		my += y[i]
	}

	mx /= float64(n)
	my /= float64(n)

	var sxx, sxy float64

	for i := range x {
		dx := x[i] - mx
		sxx += dx * dx
		sxy += dx * (y[i] - my)
	}

	if sxx == 0 {
		return Fit{N: n, Alpha: alpha}, nil, 0, ErrSameX
	}

	f := Fit{N: n, Alpha: alpha, Slope: sxy / sxx}
	f.Intercept = my - f.Slope*mx

	res := make([]float64, n)
	for i := range x {
		res[i] = y[i] - f.At(x[i])
	}

	return f, res, sxx, nil
}

// sumSquares is Σv².
func sumSquares(v []float64) float64 {
	var s float64
	for _, e := range v {
		s += e * e
	}

	return s
}

// interval sets the slope's standard error and t-interval from the
// residuals' sum of squares on NEff−2 degrees of freedom.
func (f *Fit) interval(sse, sxx float64) {
	df := f.NEff - 2
	f.SE = math.Sqrt(sse / df / sxx)
	t := TQuantile(1-f.Alpha/2, df)
	f.Lo, f.Hi = f.Slope-t*f.SE, f.Slope+t*f.SE
}

// TQuantile is the p-quantile of Student's t distribution with df degrees
// of freedom (p in (0, 1), df > 0), found by bisection on TCDF: a few dozen
// evaluations, exact to far below the precision a verdict prints.
func TQuantile(p, df float64) float64 {
	if p == 0.5 {
		return 0
	}

	if p < 0.5 {
		return -TQuantile(1-p, df)
	}

	lo, hi := 0.0, 1.0
	for TCDF(hi, df) < p {
		lo, hi = hi, 2*hi

		if hi > 1e12 {
			return math.Inf(1)
		}
	}

	for range 200 {
		mid := (lo + hi) / 2
		if TCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}

		if hi-lo < 1e-12*hi {
			break
		}
	}

	return (lo + hi) / 2
}

// TCDF is the cumulative distribution function of Student's t with df
// degrees of freedom, through the regularized incomplete beta function:
// P(T ≤ t) = 1 − I_{df/(df+t²)}(df/2, 1/2)/2 for t ≥ 0.
func TCDF(t, df float64) float64 {
	tail := incompleteBeta(df/(df+t*t), df/2, 0.5) / 2
	if t >= 0 {
		return 1 - tail
	}

	return tail
}

// incompleteBeta is the regularized incomplete beta function I_x(a, b),
// by its continued fraction (modified Lentz), using the symmetry
// I_x(a,b) = 1 − I_{1−x}(b,a) where the fraction converges slowly.
func incompleteBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}

	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log(1-x))

	if x < (a+1)/(a+b+2) {
		return front * betaFraction(x, a, b) / a
	}

	return 1 - front*betaFraction(1-x, b, a)/b
}

// betaFraction evaluates the continued fraction of the incomplete beta
// function.
func betaFraction(x, a, b float64) float64 {
	c, d := 1.0, 1-(a+b)*x/(a+1)
	d = 1 / guard(d)
	h := d

	for m := 1; m <= 300; m++ {
		fm := float64(m)

		// Even step.
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 + num*d
		c = 1 + num/c
		d, c = guard(d), guard(c)
		d = 1 / d
		h *= d * c

		// Odd step.
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 + num*d
		c = 1 + num/c
		d, c = guard(d), guard(c)
		d = 1 / d
		del := d * c
		h *= del

		if math.Abs(del-1) < 1e-15 {
			break
		}
	}

	return h
}

// tiny is the smallest magnitude a Lentz term may have.
const tiny = 1e-300

// guard keeps a Lentz term away from zero.
func guard(v float64) float64 {
	if math.Abs(v) < tiny {
		return tiny
	}

	return v
}
