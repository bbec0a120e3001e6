//! The attempt limits are the engine's (engine/src/limits.rs); here, how a refusal is answered:
//! 429 with `Retry-After`, or 500 when the counters could not be read.

pub use engine::limits::{LimitRefusal, Limits, LoginAttempt, Rate};

use crate::error::ApiError;

impl From<LimitRefusal> for ApiError {
    fn from(refusal: LimitRefusal) -> Self {
        match refusal {
            LimitRefusal::Limited { message, retry_after_secs } => Self::TooManyRequests { message, retry_after_secs },
            LimitRefusal::Failed(err) => Self::Internal(err),
        }
    }
}
