//! Statistics of interleaved comparisons: medians, and the ratio of two
//! libraries' times with a confidence interval.
//!
//! Pairing: in round `i` both libraries ran within a fraction of a second
//! of each other, so a slow spell of the machine inflates both times of
//! that round alike and their ratio `a[i] / b[i]` stays put.
//!
//! Levels: `compare`'s rounds are split into epochs, each run by new
//! worker processes, and a process's own code and heap layout move a
//! library's times by a few percent for as long as it lives. The rounds of
//! one epoch therefore move together, and the run-to-run variance of a
//! ratio is mostly between epochs: an interval that resamples the rounds
//! as if independent ([`paired_ratio`]) is too narrow for a rerun. So
//! [`epoch_ratio`] takes one value per epoch (the median of its rounds'
//! paired ratios, in logarithms) and gives the Student-t interval of their
//! mean: the top level of the repetition carries the variance of every
//! level below it (T. Kalibera and R. Jones, "Rigorous Benchmarking in
//! Reasonable Time", ISMM 2013, section 4: the confidence interval from the
//! executions' means with the t distribution; the same "batch means"
//! argument as in simulation output analysis, Law, "Simulation Modeling
//! and Analysis", 5th ed., section 9.5.3).

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

/// One round's paired times of two libraries (`a`, `b`: time per
/// iteration, any one unit), and the epoch (worker processes) it ran in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paired {
    /// The epoch (0-based).
    pub epoch: u32,
    /// The first library's time.
    pub a: f64,
    /// The second library's time.
    pub b: f64,
}

/// The ratio `a / b` of a run, on the log scale: the mean of its units'
/// log ratios and that mean's standard error, over `units` units (epochs,
/// or the rounds of a run of one epoch). What [`epoch_ratio`] forms its
/// interval from, and what `compare diff` compares two runs by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogRatio {
    /// Mean of the units' natural-log ratios.
    pub mean: f64,
    /// Its standard error (sample standard deviation / sqrt(units)).
    pub se: f64,
    /// Units averaged: epochs, or rounds when the run had one epoch.
    pub units: usize,
    /// Whether the units are epochs (else: rounds of one process, whose
    /// interval holds none of the between-process variance).
    pub epochs: bool,
}

impl LogRatio {
    /// The [`CONFIDENCE`] interval: `exp(mean ± t · se)`, `t` the
    /// quantile of Student's t with `units - 1` degrees of freedom; the
    /// estimate `exp(mean)` (a geometric mean). One unit: no spread to
    /// measure, so the interval is infinite on both sides.
    pub fn interval(&self) -> Interval {
        let half = t_quantile(self.units.saturating_sub(1)) * self.se;
        let estimate = self.mean.exp();
        Interval { estimate, low: (self.mean - half).exp(), high: (self.mean + half).exp() }
    }
}

/// The two-sided [`CONFIDENCE`] quantile of Student's t with `df` degrees
/// of freedom (infinite for 0).
pub fn t_quantile(df: usize) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    if df == 0 {
        return f64::INFINITY;
    }
    let tail = (1.0 - CONFIDENCE) / 2.0;
    StudentsT::new(0.0, 1.0, df as f64).map_or(f64::INFINITY, |t| t.inverse_cdf(1.0 - tail))
}

/// The probability that Student's t with `df` degrees of freedom lies
/// within `[-x, x]`.
pub fn t_within(x: f64, df: usize) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    StudentsT::new(0.0, 1.0, df.max(1) as f64).map_or(f64::NAN, |t| t.cdf(x) - t.cdf(-x))
}

/// The ratio `a / b` of `pairs` at the level where the rounds are
/// independent ([`LogRatio`]): with two or more epochs, one unit per epoch,
/// the log of the median of its rounds' paired ratios; with one epoch, one
/// unit per round. `None` when `pairs` is empty or holds a time that is
/// not positive and finite.
pub fn epoch_log_ratio(pairs: &[Paired]) -> Option<LogRatio> {
    let by_epoch = ratios_by_epoch(pairs)?;
    let epochs = by_epoch.len() > 1;
    let units: Vec<f64> = if epochs {
        by_epoch.values().map(|r| median(r).map(f64::ln)).collect::<Option<_>>()?
    } else {
        pairs.iter().map(|p| (p.a / p.b).ln()).collect()
    };
    let n = units.len();
    let mean = mean(&units);
    let se = if n > 1 { (sample_variance(&units) / n as f64).sqrt() } else { f64::INFINITY };
    Some(LogRatio { mean, se, units: n, epochs })
}

/// The paired ratios `a / b` of `pairs`, grouped by epoch. `None` when
/// `pairs` is empty or holds a time that is not positive and finite.
fn ratios_by_epoch(pairs: &[Paired]) -> Option<std::collections::BTreeMap<u32, Vec<f64>>> {
    let ok = |x: f64| x.is_finite() && x > 0.0;
    if pairs.is_empty() || !pairs.iter().all(|p| ok(p.a) && ok(p.b)) {
        return None;
    }
    let mut by_epoch: std::collections::BTreeMap<u32, Vec<f64>> = Default::default();
    for p in pairs {
        by_epoch.entry(p.epoch).or_default().push(p.a / p.b);
    }
    Some(by_epoch)
}

/// The mean of `xs` (NaN when empty).
fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The sample variance of `xs` (n - 1 in the denominator; at least two
/// values).
fn sample_variance(xs: &[f64]) -> f64 {
    let m = mean(xs);
    xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64
}

/// How much more the epochs of `pairs` differ than their rounds' noise
/// predicts: `sqrt(var(epoch means) / (mean within-epoch variance / mean
/// rounds per epoch))` of the rounds' log ratios. About 1 when the noise
/// is per slice (an epoch's mean is as steady as its rounds make it);
/// well above 1 when something lasts an epoch (a process's layout, or the
/// machine's spells longer than a slice). `None` with fewer than two
/// epochs of two rounds or more, or a time that is not positive and
/// finite.
pub fn epoch_excess(pairs: &[Paired]) -> Option<f64> {
    let logs: Vec<Vec<f64>> = ratios_by_epoch(pairs)?
        .into_values()
        .filter(|r| r.len() >= 2)
        .map(|r| r.into_iter().map(f64::ln).collect())
        .collect();
    if logs.len() < 2 {
        return None;
    }
    let means: Vec<f64> = logs.iter().map(|v| mean(v)).collect();
    let within: Vec<f64> = logs.iter().map(|v| sample_variance(v)).collect();
    let rounds = mean(&logs.iter().map(|v| v.len() as f64).collect::<Vec<_>>());
    let expected = mean(&within) / rounds;
    (expected > 0.0).then(|| (sample_variance(&means) / expected).sqrt())
}

/// [`epoch_log_ratio`]'s [`CONFIDENCE`] interval ([`LogRatio::interval`]).
pub fn epoch_ratio(pairs: &[Paired]) -> Option<Interval> {
    epoch_log_ratio(pairs).map(|r| r.interval())
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

    fn pairs(epochs: &[(u32, f64)], rounds: usize) -> Vec<Paired> {
        // Each epoch's ratio, with a machine whose speed swings by round.
        epochs
            .iter()
            .flat_map(|&(epoch, ratio)| {
                (0..rounds).map(move |i| {
                    let speed = 1.0 + (i % 3) as f64 * 0.5;
                    Paired { epoch, a: 100.0 * ratio * speed, b: 100.0 * speed }
                })
            })
            .collect()
    }

    #[test]
    fn the_interval_is_as_wide_as_the_epochs_spread_whatever_the_rounds() {
        // Every round of an epoch agrees exactly: a round bootstrap would
        // give a zero-width interval per epoch. The epochs differ by ±2%.
        let p = pairs(&[(0, 1.48), (1, 1.52), (2, 1.50), (3, 1.53), (4, 1.47), (5, 1.50)], 10);
        let r = epoch_log_ratio(&p).unwrap();
        assert!(r.epochs && r.units == 6, "{r:?}");
        let i = r.interval();
        assert!((i.estimate - 1.4999).abs() < 0.01, "{i:?}");
        // The epochs' standard deviation is about 2.3%; t(5) = 2.571.
        assert!(i.low < 1.48 && i.high > 1.52, "{i:?}");
        assert!(i.high / i.low < 1.06, "{i:?}");
        // The same epochs with 100 rounds each: no narrower.
        let wide =
            epoch_ratio(&pairs(&[(0, 1.48), (1, 1.52), (2, 1.50), (3, 1.53), (4, 1.47), (5, 1.50)], 100));
        assert!((wide.unwrap().high - i.high).abs() < 1e-9);
        // The round bootstrap of the same data, for contrast: far narrower.
        let (a, b): (Vec<f64>, Vec<f64>) = p.iter().map(|p| (p.a, p.b)).unzip();
        let rounds = paired_ratio(&a, &b).unwrap();
        assert!(rounds.high / rounds.low < i.high / i.low, "{rounds:?} {i:?}");
    }

    #[test]
    fn one_epoch_falls_back_to_its_rounds_and_one_unit_has_no_bounds() {
        let p: Vec<Paired> =
            (0..20).map(|i| Paired { epoch: 3, a: 120.0 + (i % 5) as f64, b: 100.0 }).collect();
        let r = epoch_log_ratio(&p).unwrap();
        assert!(!r.epochs && r.units == 20, "{r:?}");
        let i = r.interval();
        assert!(i.low < i.estimate && i.estimate < i.high && i.contains(1.22), "{i:?}");
        let one = epoch_ratio(&[Paired { epoch: 0, a: 2.0, b: 1.0 }]).unwrap();
        assert!((one.estimate - 2.0).abs() < 1e-12 && one.low == 0.0 && one.high == f64::INFINITY, "{one:?}");
        assert!(epoch_ratio(&[]).is_none());
        assert!(epoch_ratio(&[Paired { epoch: 0, a: 0.0, b: 1.0 }]).is_none());
    }

    #[test]
    fn epochs_that_differ_beyond_their_rounds_show_an_excess() {
        // Rounds alternating ±1% around each epoch's value.
        let noisy = |epoch_ratio: &dyn Fn(u32) -> f64| -> Vec<Paired> {
            (0..80u32)
                .map(|r| {
                    let e = r / 10;
                    let wiggle = if r % 2 == 0 { 1.01 } else { 0.99 };
                    Paired { epoch: e, a: 100.0 * epoch_ratio(e) * wiggle, b: 100.0 }
                })
                .collect()
        };
        // Every epoch alike: no excess.
        assert!(epoch_excess(&noisy(&|_| 1.5)).unwrap() < 0.1);
        // Epochs ±3% apart: far beyond ±1% rounds averaged over 10.
        let apart = epoch_excess(&noisy(&|e| 1.5 * if e % 2 == 0 { 1.03 } else { 0.97 })).unwrap();
        assert!(apart > 5.0, "{apart}");
        assert!(epoch_excess(&noisy(&|_| 1.5)[..10]).is_none());
    }

    #[test]
    fn t_quantiles_are_students() {
        assert!((t_quantile(1) - 12.706).abs() < 1e-3);
        assert!((t_quantile(7) - 2.365).abs() < 1e-3);
        assert!((t_quantile(1000) - 1.962).abs() < 1e-3);
        assert!((t_within(t_quantile(7), 7) - CONFIDENCE).abs() < 1e-9);
    }
}
