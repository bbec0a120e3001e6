//! Per-user limit on decision requests (approve, reject, approve-all, reject-all, abort).
//! Over the limit: 429 with `Retry-After`.

use std::{num::NonZeroU32, sync::Arc};

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter, clock::Clock};

use crate::api::ApiError;

#[derive(Clone)]
pub struct DecisionLimiter(Arc<DefaultKeyedRateLimiter<String>>);

impl DecisionLimiter {
    /// `per_minute` decisions a minute, allowing bursts of the same size.
    pub fn new(per_minute: u32) -> Self {
        let n = NonZeroU32::new(per_minute.max(1)).expect("BUG: at least 1");
        Self(Arc::new(RateLimiter::keyed(Quota::per_minute(n).allow_burst(n))))
    }

    pub fn check(&self, user_id: &str) -> Result<(), ApiError> {
        self.0.check_key(&user_id.to_owned()).map_err(|not_until| {
            let wait = not_until.wait_time_from(governor::clock::DefaultClock::default().now());
            ApiError::TooManyRequests { retry_after_secs: wait.as_secs().max(1) }
        })
    }
}
