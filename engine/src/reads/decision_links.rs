//! What a signed decision link's page (server/src/links/page.rs) checks before it shows or decides
//! anything: the pair of links as recorded (revoked?), and whether its person sees the approval;
//! a chat app's button (server/src/channels/slack.rs) decides for no one else either.

use super::{ApprovalRow, Reads};
use crate::{
    orchestrator::{self, Actor},
    store::decision_links,
};

pub use crate::store::decision_links::LinkRow;

impl Reads {
    /// The pair of decision links with this id as recorded, if it was (links made before links
    /// were recorded have no row).
    pub async fn decision_link(&self, link_id: &str) -> anyhow::Result<Option<LinkRow>> {
        decision_links::get(&self.store, link_id).await
    }

    /// Whether `person` sees the approval as the API would let them (its owner, an admin, one
    /// named to decide it, or someone standing in for one now): the rule links are made by
    /// (`orchestrator::sees_approval`, engine/src/orchestrator/decision_links.rs).
    pub async fn sees_approval(&self, approval: &ApprovalRow, person: &Actor) -> anyhow::Result<bool> {
        orchestrator::sees_approval(&self.store, approval, person).await
    }
}
