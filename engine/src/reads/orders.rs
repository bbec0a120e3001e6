//! The demo domain's orders, read-only (the built-in tools change them).

use domain::wire::Order;

use super::Reads;
use crate::store::orders;

impl Reads {
    /// Every demo order, as the API shows it.
    pub async fn orders(&self) -> anyhow::Result<Vec<Order>> {
        Ok(orders::list(&self.store, None).await?.iter().map(|o| o.to_wire()).collect())
    }

    /// The demo order with this number, if there is one, as the API shows it.
    pub async fn order(&self, number: i64) -> anyhow::Result<Option<Order>> {
        Ok(orders::get(&self.store, number).await?.map(|o| o.to_wire()))
    }
}
