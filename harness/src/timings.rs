//! Netdata's table: transactions, time to complete, transaction rate and the
//! average, min and max response time, for the experiments that reproduce it (the
//! context query and its HTTP form).

use std::time::Duration;

use crate::output::fmt_duration;

/// The columns of Netdata's table for one contender in one test.
#[derive(Clone, Default)]
pub struct Timings {
    pub transactions: usize,
    /// Sequential: the sum of the response times (or the test's wall time); parallel:
    /// the batch's wall time.
    pub complete: Duration,
    pub response_sum: Duration,
    pub min: Option<Duration>,
    pub max: Duration,
}

impl Timings {
    /// Counts one transaction that took `t` (parallel: since the batch started).
    pub fn add_response(&mut self, t: Duration) {
        self.transactions += 1;
        self.response_sum += t;
        self.min = Some(self.min.map_or(t, |m| m.min(t)));
        self.max = self.max.max(t);
    }

    /// Transactions per second.
    pub fn rate(&self) -> f64 {
        self.transactions as f64 / self.complete.as_secs_f64()
    }

    pub fn average(&self) -> Duration {
        self.response_sum / self.transactions.max(1) as u32
    }

    /// Time to complete, rate, average, min and max response: the cells of
    /// [`Timings::HEADER`].
    pub fn cells(&self) -> [String; 5] {
        [
            fmt_duration(self.complete),
            format!("{:.2}", self.rate()),
            fmt_duration(self.average()),
            fmt_duration(self.min.unwrap_or_default()),
            fmt_duration(self.max),
        ]
    }

    /// The headers of [`Timings::cells`].
    pub const HEADER: [&str; 5] = [
        "time to\ncomplete",
        "rate\n(per s)",
        "average\nresponse",
        "min\nresponse",
        "max\nresponse",
    ];
}
