//! Delegations (out of office) as the API lists them.

use domain::wire::Delegation;

use super::Reads;
use crate::store::delegations;

impl Reads {
    /// The delegations `whose` gave or received (`None`: every one), newest first, as the API shows them.
    pub async fn delegations(&self, whose: Option<&str>) -> anyhow::Result<Vec<Delegation>> {
        Ok(delegations::list(&self.store, whose).await?.iter().map(|row| row.to_wire()).collect())
    }
}
