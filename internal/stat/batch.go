package stat

import "math"

// Batch means: the spread of means of consecutive batches, each much longer
// than the noise's correlation, gives the variance of the overall mean
// whatever the correlation (Law & Carson 1979; Flegal & Jones 2010).
const (
	// MinBatches is the fewest batches an interval is built from.
	MinBatches = 10
	// BatchFactor: a batch is this many correlation lengths long.
	BatchFactor = 10
)

// MeanSE is a mean with the standard uncertainty of its statistical part.
type MeanSE struct {
	Mean float64
	// SE is the standard uncertainty of Mean from the data's scatter and
	// correlation (NaN for fewer than two values); Dof its degrees of
	// freedom.
	SE, Dof float64
	N       int
	// Batch is the batch length in values (1: the values are independent)
	// and Batches how many batches the SE is from.
	Batch, Batches int
	// CorrLen is the first lag with autocorrelation below the threshold
	// (CorrLength); TauInt the integrated autocorrelation time (N/TauInt
	// is the effective sample size).
	CorrLen int
	TauInt  float64
	// Short: the series holds fewer than MinBatches batches of the length
	// its correlation asks for; SE is then the larger of batch means over
	// MinBatches shorter batches and σ²·τ/N, at MinBatches − 1 degrees of
	// freedom, and errs wide less surely.
	Short bool
}

// U95 is the 95 % half-width of the mean from its statistical part alone
// (Student's t at Dof); NaN without an SE.
func (m MeanSE) U95() float64 { return T975(m.Dof) * m.SE }

// MeanStdErr is the mean of the series x (values at a fixed spacing) with
// the standard uncertainty of its statistical part by batch means: batches
// of BatchFactor × (CorrLength − 1) values (at least 1), the standard
// deviation of the batch means over √batches, Student's t at batches − 1
// (see MeanSE.Short for a series too short for MinBatches such batches),
// and never below σ²·τ/N, τ the integrated autocorrelation time.
func MeanStdErr(x []float64) MeanSE {
	n := len(x)
	r := MeanSE{Mean: Mean(x), SE: math.NaN(), N: n, TauInt: 1, CorrLen: 1, Batch: 1}
	if n < 2 {
		return r
	}
	acf := ShortACF(x)
	r.CorrLen = CorrLength(acf, n)
	r.TauInt = IntegratedTime(acf)
	b := max(1, BatchFactor*(r.CorrLen-1))
	// σ²·τ/N, the effective-sample-size figure, is the floor: batch means
	// alone held 93.3 % of 600 AR(1) draws like TestMeanStdErrCoverage's,
	// the larger of the two 94.3 %, 6 % wider.
	vx := Var(x)
	ess := vx * r.TauInt / float64(n)
	if k := n / b; k >= MinBatches {
		r.Batch, r.Batches = b, k
		// Batches of one value are the values: batchVar(x, 1) is Var(x)
		// bit for bit (the mean of one value is that value, −0 read as
		// +0, which the variance reads alike), without a copy of x.
		bv := vx
		if b > 1 {
			bv = batchVar(x, b)
		}
		r.SE = math.Sqrt(math.Max(bv/float64(k), ess))
		r.Dof = float64(k - 1)
		return r
	}
	r.Short = true
	v := ess
	if n >= 2*MinBatches {
		b = n / MinBatches
		r.Batch, r.Batches = b, MinBatches
		v = math.Max(v, batchVar(x, b)/MinBatches)
		r.Dof = MinBatches - 1
	} else {
		r.Batches = n
		r.Dof = math.Max(1, float64(n)/r.TauInt-1)
	}
	r.SE = math.Sqrt(v)
	return r
}

// batchVar is the sample variance of the means of the n/b whole batches of
// b consecutive values of x.
func batchVar(x []float64, b int) float64 {
	k := len(x) / b
	m := floatScratches.Get(k)
	defer floatScratches.Put(m)
	for i := range m {
		m[i] = Mean(x[i*b : (i+1)*b])
	}
	return Var(m)
}
