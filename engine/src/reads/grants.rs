//! Standing grants ("always allow") as the routes look them up.

use domain::GrantId;

use super::Reads;
use crate::store::grants::{self, GrantRow};

impl Reads {
    /// The grant with this id, if there is one (whoever may see it: the caller checks).
    pub async fn grant(&self, id: &GrantId) -> anyhow::Result<Option<GrantRow>> {
        grants::get(&self.store, id).await
    }
}
