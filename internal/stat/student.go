package stat

import "math"

// T975 is the 0.975 quantile of Student's t with nu degrees of freedom:
// from the table up to 30 (nu rounded down, which errs wide), above by the
// Cornish–Fisher expansion (within 0.01 %); +Inf below 1 degree of freedom.
func T975(nu float64) float64 {
	const z = Z975
	if math.IsInf(nu, 1) {
		return z
	}
	if !(nu >= 1) {
		return math.Inf(1)
	}
	if nu <= 30 {
		return t975Table[int(nu)-1]
	}
	z3, z5, z7 := z*z*z, z*z*z*z*z, z*z*z*z*z*z*z
	return z + (z3+z)/(4*nu) + (5*z5+16*z3+3*z)/(96*nu*nu) + (3*z7+19*z5+17*z3-15*z)/(384*nu*nu*nu)
}

var t975Table = [30]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// Expanded is the 95 % expanded uncertainty of a statistical variance vs
// with dof degrees of freedom combined with type-B standard uncertainties
// (infinite degrees of freedom) in quadrature: the coverage factor is
// Student's t at the Welch–Satterthwaite effective degrees of freedom.
func Expanded(vs, dof float64, typeB ...float64) float64 {
	uc2 := vs
	for _, u := range typeB {
		if !math.IsNaN(u) {
			uc2 += u * u
		}
	}
	if uc2 == 0 {
		return 0
	}
	nu := math.Inf(1)
	if vs > 0 {
		nu = uc2 * uc2 / (vs * vs / dof)
	}
	return T975(nu) * math.Sqrt(uc2)
}
