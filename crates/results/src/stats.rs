//! Statistics of interleaved comparisons: medians, and the ratio of two
//! libraries' times with a confidence interval from the per-round paired
//! ratios (percentile bootstrap of the median: Efron and Tibshirani, "An
//! Introduction to the Bootstrap", 1993, chapter 13).
//!
//! Pairing: in round `i` both libraries ran within a fraction of a second
//! of each other, so a slow spell of the machine inflates both times of
//! that round alike and their ratio `a[i] / b[i]` stays put. The median of
//! those ratios is the estimate; resampling the rounds with replacement
//! gives its interval.

/// Resamples drawn for a bootstrap interval.
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;

/// Confidence level of the intervals: 95%.
pub const CONFIDENCE: f64 = 0.95;

/// The median of `xs` (the mean of the two middle values for an even
/// count); `None` when `xs` is empty or holds a NaN.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|x| x.is_nan()) {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 { v[mid] } else { (v[mid - 1] + v[mid]) / 2.0 })
}

/// An estimate with its [`CONFIDENCE`] interval (defined with the results
/// it is saved in).
pub use crate::compare::Interval;

/// The median of the paired ratios `a[i] / b[i]` with a percentile
/// bootstrap interval ([`BOOTSTRAP_RESAMPLES`] resamples of the rounds,
/// a fixed seed so a report can be redrawn to the same figures).
///
/// `None` when the slices differ in length, are empty, or hold a value
/// that is not positive and finite (a time of zero is a broken sample).
pub fn paired_ratio(a: &[f64], b: &[f64]) -> Option<Interval> {
    let ok = |x: &f64| x.is_finite() && *x > 0.0;
    if a.len() != b.len() || a.is_empty() || !a.iter().chain(b).all(ok) {
        return None;
    }
    let ratios: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    let estimate = median(&ratios)?;
    let mut rng = oorandom::Rand64::new(0x7115_bec4);
    let n = ratios.len();
    let mut resample = vec![0.0; n];
    let mut medians = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        for slot in resample.iter_mut() {
            *slot = ratios[rng.rand_range(0..n as u64) as usize];
        }
        medians.push(median(&resample)?);
    }
    medians.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    let at = |q: f64| medians[((q * (medians.len() - 1) as f64).round() as usize).min(medians.len() - 1)];
    Some(Interval { estimate, low: at(tail), high: at(1.0 - tail) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn a_common_slowdown_cancels_in_paired_ratios() {
        // b is 20% slower than a in every round, while the machine's speed
        // swings 2x between rounds: the unpaired medians' spread is large,
        // the paired ratio is exact.
        let speed: Vec<f64> =
            (0..40).map(|i| if i % 3 == 0 { 2.0 } else { 1.0 + i as f64 / 100.0 }).collect();
        let a: Vec<f64> = speed.iter().map(|s| 100.0 * s).collect();
        let b: Vec<f64> = speed.iter().map(|s| 120.0 * s).collect();
        let r = paired_ratio(&b, &a).unwrap();
        assert!(
            (r.estimate - 1.2).abs() < 1e-12 && (r.low - 1.2).abs() < 1e-12 && (r.high - 1.2).abs() < 1e-12
        );
        assert!(!r.contains(1.0));
    }

    #[test]
    fn noise_without_difference_includes_one() {
        // Ratios scattered around 1.0 on both sides.
        let a: Vec<f64> = (0..30).map(|i| 100.0 + ((i * 37) % 11) as f64).collect();
        let b: Vec<f64> = (0..30).map(|i| 100.0 + ((i * 53) % 11) as f64).collect();
        let r = paired_ratio(&a, &b).unwrap();
        assert!(r.low < r.estimate && r.estimate < r.high || r.low == r.high, "{r:?}");
        assert!(r.contains(1.0), "{r:?}");
        assert!((r.high - r.low) / r.estimate < 0.2, "{r:?}");
    }

    #[test]
    fn broken_input_has_no_interval() {
        assert!(paired_ratio(&[1.0], &[1.0, 2.0]).is_none());
        assert!(paired_ratio(&[], &[]).is_none());
        assert!(paired_ratio(&[0.0], &[1.0]).is_none());
        assert!(paired_ratio(&[f64::INFINITY], &[1.0]).is_none());
    }
}
