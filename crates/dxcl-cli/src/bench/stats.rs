//! The timing loop and its summary: warm-up, an adaptive number of samples, percentiles.

use std::time::{Duration, Instant};

/// How long and how often one case is timed.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Untimed runs first: the first calls pay for lazy allocation and cold caches.
    pub warmup: usize,
    /// At least this many samples, however long they take.
    pub min_samples: usize,
    /// More samples while the case has used less than this (warm-up excluded).
    pub time: Duration,
    /// And never more than this many.
    pub max_samples: usize,
}

/// Median and spread of one case, in microseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub samples: usize,
    pub median_us: f64,
    pub p10_us: f64,
    pub p90_us: f64,
}

/// The `q`-quantile (0..=1) of sorted values, interpolating linearly between neighbours.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

impl Summary {
    /// `None` for no samples.
    pub fn of(samples: &[Duration]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        let mut us: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        us.sort_by(f64::total_cmp);
        Some(Summary {
            samples: us.len(),
            median_us: quantile(&us, 0.5),
            p10_us: quantile(&us, 0.1),
            p90_us: quantile(&us, 0.9),
        })
    }
}

/// One timed operation: `between(i)` runs before its sample `i`, outside the timed region.
pub struct Timed<'a, E> {
    pub between: Box<dyn FnMut(usize) -> Result<(), E> + 'a>,
    pub op: Box<dyn FnMut() -> Result<(), E> + 'a>,
}

impl<'a, E> Timed<'a, E> {
    pub fn new(op: impl FnMut() -> Result<(), E> + 'a) -> Self {
        Timed {
            between: Box::new(|_| Ok(())),
            op: Box::new(op),
        }
    }

    pub fn with_between(mut self, between: impl FnMut(usize) -> Result<(), E> + 'a) -> Self {
        self.between = Box::new(between);
        self
    }
}

/// Times the operations in rounds, one sample of each per round, so that drift on a busy machine
/// (clock changes, other processes) affects each alike. Stops once every operation has
/// `min_samples` and the operations together (with what runs between their samples) have used
/// `time` per operation, or at `max_samples`.
pub fn measure<E>(budget: &Budget, cases: &mut [Timed<'_, E>]) -> Result<Vec<Summary>, E> {
    for i in 0..budget.warmup {
        for c in cases.iter_mut() {
            (c.between)(i)?;
            (c.op)()?;
        }
    }
    let mut samples: Vec<Vec<Duration>> = cases
        .iter()
        .map(|_| Vec::with_capacity(budget.min_samples))
        .collect();
    let total = budget.time * cases.len() as u32;
    let mut spent = Duration::ZERO;
    let mut round = 0;
    while round < budget.min_samples || (spent < total && round < budget.max_samples) {
        for (c, s) in cases.iter_mut().zip(samples.iter_mut()) {
            // The budget counts what runs between samples too (a pause before a clean floor
            // sample, a Direct3D write), so a case cannot stretch the run unseen.
            let round_start = Instant::now();
            (c.between)(round)?;
            let start = Instant::now();
            (c.op)()?;
            s.push(start.elapsed());
            spent += round_start.elapsed();
        }
        round += 1;
    }
    Ok(samples.iter().filter_map(|s| Summary::of(s)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate() {
        let d: Vec<Duration> = (1..=11).map(|i| Duration::from_micros(i * 10)).collect();
        let s = Summary::of(&d).unwrap();
        assert_eq!(s.samples, 11);
        assert!((s.median_us - 60.0).abs() < 1e-9);
        assert!((s.p10_us - 20.0).abs() < 1e-9);
        assert!((s.p90_us - 100.0).abs() < 1e-9);
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn measure_honours_minimum_and_cap_and_interleaves() {
        let log = std::cell::RefCell::new(String::new());
        let budget = Budget {
            warmup: 2,
            min_samples: 5,
            time: Duration::from_secs(3600),
            max_samples: 7,
        };
        let mut cases = [
            Timed::new(|| {
                log.borrow_mut().push('a');
                Ok::<(), ()>(())
            }),
            Timed::new(|| {
                log.borrow_mut().push('b');
                Ok(())
            })
            .with_between(|i| {
                log.borrow_mut()
                    .push(char::from_digit(i as u32, 10).unwrap());
                Ok(())
            }),
        ];
        let s = measure(&budget, &mut cases).unwrap();
        assert_eq!((s.len(), s[0].samples, s[1].samples), (2, 7, 7));
        drop(cases);
        assert_eq!(log.into_inner(), "a0ba1ba0ba1ba2ba3ba4ba5ba6b");
        let quick = Budget {
            time: Duration::ZERO,
            ..budget
        };
        let s = measure::<()>(&quick, &mut [Timed::new(|| Ok(()))]).unwrap();
        assert_eq!(s[0].samples, 5);
        assert_eq!(measure(&quick, &mut [Timed::new(|| Err(3))]), Err(3));
    }
}
