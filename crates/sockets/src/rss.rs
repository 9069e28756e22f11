//! A server's memory over time: its resident set size (RSS), sampled from
//! `/proc/self/statm` (proc(5): the second field, resident pages, times the
//! page size) at a fixed interval by a thread of its own, and summed up as
//! start, peak, end and the slope of the run's last half: a server whose
//! RSS keeps growing under a steady load leaks.

use std::{
    sync::mpsc,
    thread::JoinHandle,
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
pub use tls_bench_results::sockets::RssTrace;

/// This process's resident set size now, KiB ([`crate::process::rss_kib`]).
/// Errors: `/proc/self/statm` cannot be read (not Linux).
pub fn rss_kib() -> Result<u64> {
    crate::process::rss_kib(None)
}

/// A sampling thread: one sample at once, then one per interval until
/// [`Sampler::finish`].
pub struct Sampler {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<Result<Vec<u64>>>,
    interval: Duration,
}

impl Sampler {
    /// Starts sampling every `interval`. Errors: the first sample cannot
    /// be taken (not Linux), the thread cannot start.
    pub fn start(interval: Duration) -> Result<Sampler> {
        let first = rss_kib()?;
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("tls-bench-rss".into())
            .spawn(move || {
                let mut samples = vec![first];
                let mut next = Instant::now() + interval;
                loop {
                    let wait = next.saturating_duration_since(Instant::now());
                    match stopped.recv_timeout(wait) {
                        Err(mpsc::RecvTimeoutError::Timeout) => {
                            samples.push(rss_kib()?);
                            next += interval;
                        }
                        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    }
                }
                samples.push(rss_kib()?);
                Ok(samples)
            })
            .context("starting the RSS sampling thread")?;
        Ok(Sampler { stop, thread, interval })
    }

    /// Stops sampling (with a last sample) and returns the trace. Errors: a
    /// sample failed.
    pub fn finish(self) -> Result<RssTrace> {
        let stopped = self.stop.send(());
        let samples =
            self.thread.join().map_err(|_| anyhow::anyhow!("the RSS sampling thread panicked"))??;
        // The thread ends only when told, or on a failed sample (returned
        // above): a closed channel with samples is a thread gone early.
        stopped.map_err(|_| anyhow::anyhow!("the RSS sampling thread ended before it was stopped"))?;
        Ok(RssTrace::of(samples, self.interval))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slope_is_the_last_half_growth_per_minute() {
        // Flat, then +10 KiB per 1 s sample: 600 KiB/min over the last half.
        let samples: Vec<u64> = (0..8).map(|_| 1000).chain((0..8).map(|i| 1000 + 10 * i)).collect();
        let t = RssTrace::of(samples, Duration::from_secs(1));
        assert!((t.slope_last_half_kib_per_min.unwrap() - 600.0).abs() < 1e-9, "{t:?}");
        assert_eq!((t.start_kib, t.peak_kib, t.end_kib), (1000, 1070, 1070));
        let short = RssTrace::of(vec![5, 6, 7], Duration::from_secs(1));
        assert_eq!(short.slope_last_half_kib_per_min, None);
    }

    #[test]
    fn sampler_reads_this_process() {
        let s = Sampler::start(Duration::from_millis(10)).unwrap();
        let keep = vec![1u8; 8 << 20];
        std::thread::sleep(Duration::from_millis(50));
        let t = s.finish().unwrap();
        assert!(t.samples_kib.len() >= 3 && t.start_kib > 0, "{t:?}");
        assert!(t.peak_kib >= t.start_kib);
        drop(keep);
    }
}
