//! Shadow hits: the calls shadow gates would have stopped, and those the draft would have treated
//! otherwise.

use domain::{UserId, wire::ShadowHit};

use super::Reads;
use crate::store::shadow_hits;

pub use crate::store::shadow_hits::Which;

impl Reads {
    /// The newest `limit` shadow hits of one kind, of one owner's conversations (`None`: everyone's).
    pub async fn shadow_hits(&self, owner_id: Option<&UserId>, which: Which, limit: i64) -> anyhow::Result<Vec<ShadowHit>> {
        shadow_hits::list(&self.store, owner_id, which, limit).await
    }
}
