//! The demo domain: orders the built-in tools read, cancel and refund.

use anyhow::Context;
use app::domain::wire::Order;
use sqlx::{AnyConnection, AnyExecutor};

#[derive(sqlx::FromRow, Clone, Debug)]
pub struct OrderRow {
    pub id: i64,
    pub customer: String,
    pub item: String,
    pub amount_cents: i64,
    pub refunded_cents: i64,
    pub status: String,
}

impl OrderRow {
    pub fn to_wire(&self) -> Order {
        Order {
            id: self.id,
            customer: self.customer.clone(),
            item: self.item.clone(),
            amount: self.amount_cents as f64 / 100.0,
            refunded: self.refunded_cents as f64 / 100.0,
            status: self.status.clone(),
        }
    }
}

const SELECT: &str = "SELECT id, customer, item, amount_cents, refunded_cents, status FROM orders";

pub async fn get(db: impl AnyExecutor<'_>, id: i64) -> anyhow::Result<Option<OrderRow>> {
    sqlx::query_as(&format!("{SELECT} WHERE id = $1")).bind(id).fetch_optional(db).await.context("failed to load order")
}

pub async fn list(db: impl AnyExecutor<'_>, customer: Option<&str>) -> anyhow::Result<Vec<OrderRow>> {
    // A NULL customer matches every order.
    sqlx::query_as(&format!("{SELECT} WHERE $1 IS NULL OR lower(customer) = lower($1) ORDER BY id"))
        .bind(customer)
        .fetch_all(db)
        .await
        .context("failed to list orders")
}

pub async fn set_status(conn: &mut AnyConnection, id: i64, status: &str) -> anyhow::Result<()> {
    sqlx::query("UPDATE orders SET status = $1 WHERE id = $2")
        .bind(status)
        .bind(id)
        .execute(conn)
        .await
        .context("failed to update order")?;
    Ok(())
}

pub async fn add_refund(conn: &mut AnyConnection, id: i64, cents: i64) -> anyhow::Result<()> {
    sqlx::query(
        "UPDATE orders SET refunded_cents = refunded_cents + $1,
            status = CASE WHEN refunded_cents + $2 >= amount_cents THEN 'refunded' ELSE status END
         WHERE id = $3",
    )
    .bind(cents)
    .bind(cents)
    .bind(id)
    .execute(conn)
    .await
    .context("failed to refund order")?;
    Ok(())
}
