//! What the service routes ask: whether the database answers (`/healthz`, `/readyz`), and what
//! waits, by gate (`/metrics`).

use super::Reads;
use crate::store::approvals;

impl Reads {
    /// Whether the database answers (an error when it does not).
    pub async fn ping(&self) -> anyhow::Result<()> {
        self.store.ping().await
    }

    /// The number of pending approvals of each gate, by gate name.
    pub async fn pending_by_gate(&self) -> anyhow::Result<Vec<(String, i64)>> {
        approvals::pending_by_gate(&self.store).await
    }
}
