//! The demo domain: orders the built-in tools read, cancel and refund.

use super::Db;
use anyhow::Context;
use domain::wire::Order;
use sqlx::AnyConnection;

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

pub async fn get(db: impl Into<Db<'_>>, id: i64) -> anyhow::Result<Option<OrderRow>> {
    sqlx::query_as(&format!("{SELECT} WHERE id = $1")).bind(id).fetch_optional(db.into().read()).await.context("failed to load order")
}

/// The order for a tool about to change it. PostgreSQL: its row stays locked until the
/// transaction ends, so a refund from another conversation waits and then reads the new amount
/// (SQLite has one writer; there the lock is implied).
pub async fn get_to_change(conn: &mut AnyConnection, id: i64) -> anyhow::Result<Option<OrderRow>> {
    let lock = if conn.backend_name() == "PostgreSQL" { " FOR UPDATE" } else { "" };
    sqlx::query_as(&format!("{SELECT} WHERE id = $1{lock}")).bind(id).fetch_optional(conn).await.context("failed to load order")
}

pub async fn list(db: impl Into<Db<'_>>, customer: Option<&str>) -> anyhow::Result<Vec<OrderRow>> {
    // A NULL customer matches every order.
    sqlx::query_as(&format!("{SELECT} WHERE $1 IS NULL OR lower(customer) = lower($1) ORDER BY id"))
        .bind(customer)
        .fetch_all(db.into().read())
        .await
        .context("failed to list orders")
}

/// Compare-and-set: changes the status only if it still is `from` (another conversation may have
/// changed the order since it was read). Returns whether it did.
pub async fn set_status(conn: &mut AnyConnection, id: i64, from: &str, to: &str) -> anyhow::Result<bool> {
    let result = sqlx::query("UPDATE orders SET status = $1 WHERE id = $2 AND status = $3")
        .bind(to)
        .bind(id)
        .bind(from)
        .execute(conn)
        .await
        .context("failed to update order")?;
    Ok(result.rows_affected() == 1)
}

/// Compare-and-set: refunds `cents` only if the order is still as it was read (`seen`), so two
/// refunds of one order from different conversations can never add up to more than was paid, and
/// a canceled order is never refunded. Returns whether it did.
pub async fn add_refund(conn: &mut AnyConnection, seen: &OrderRow, cents: i64) -> anyhow::Result<bool> {
    let result = sqlx::query(
        "UPDATE orders SET refunded_cents = refunded_cents + $1,
            status = CASE WHEN refunded_cents + $2 >= amount_cents THEN 'refunded' ELSE status END
         WHERE id = $3 AND status = $4 AND refunded_cents = $5",
    )
    .bind(cents)
    .bind(cents)
    .bind(seen.id)
    .bind(&seen.status)
    .bind(seen.refunded_cents)
    .execute(conn)
    .await
    .context("failed to refund order")?;
    Ok(result.rows_affected() == 1)
}
