//! Built-in demo tools on the orders table: list, look up, cancel, refund.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use sqlx::AnyConnection;

use super::{Description, Tool, ToolError, ToolFailure, ToolSpec};
use crate::store::orders::{self, OrderRow};
use domain::wire::{Reversibility, RiskAssessment};

pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![Arc::new(ListOrders::new()), Arc::new(GetOrder::new()), Arc::new(CancelOrder::new()), Arc::new(ProcessRefund::new())]
}

/// `$1,200.00`: thousands separated, so a large amount is not misread at a glance.
fn dollars(cents: i64) -> String {
    let whole = (cents / 100).to_string();
    let mut grouped = String::new();
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("${grouped}.{:02}", cents % 100)
}

/// "order 1004 · bob · Barista course": which order, whose, what.
fn order_line(order: &OrderRow) -> String {
    format!("order {} · {} · {}", order.id, order.customer, order.item)
}

/// A warning when the user's request in this turn does not mention what the call does.
/// (An empty `request`, as when a reviewer's edit is described, is not checked.)
fn unasked(request: &str, word: &str, what: &str) -> Option<String> {
    (!request.trim().is_empty() && !request.to_lowercase().contains(word))
        .then(|| format!("Not asked for: the request “{}” does not mention {what}", request.trim()))
}

/// The order a call names, for `describe`: None when it does not exist (the summary then says so).
async fn find(conn: &mut AnyConnection, args: &Value) -> anyhow::Result<Option<OrderRow>> {
    match order_id(args) {
        Some(id) => orders::get(&mut *conn, id).await,
        None => Ok(None),
    }
}

fn required_order_id(args: &Value) -> Result<i64, ToolFailure> {
    order_id(args).ok_or_else(|| ToolFailure("order_id must be an integer".into()))
}

fn order_id(args: &Value) -> Option<i64> {
    args.get("order_id").and_then(Value::as_i64)
}

/// The order a call changes (locked for it, see `orders::get_to_change`).
async fn load(conn: &mut AnyConnection, args: &Value) -> Result<OrderRow, ToolError> {
    let id = required_order_id(args)?;
    orders::get_to_change(&mut *conn, id).await?.ok_or_else(|| ToolFailure(format!("order {id} does not exist")).into())
}

fn order_id_schema() -> Value {
    json!({ "type": "integer", "minimum": 1, "description": "The order number, e.g. 1001" })
}

pub struct ListOrders(ToolSpec);

impl ListOrders {
    fn new() -> Self {
        Self(ToolSpec {
            name: "list_orders".into(),
            description: "List orders, optionally of one customer".into(),
            input_schema: json!({
                "type": "object",
                "properties": { "customer": { "type": "string", "minLength": 1 } },
                "additionalProperties": false
            }),
            read_only: true,
            destructive: false,
        })
    }
}

#[async_trait]
impl Tool for ListOrders {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn summarize(&self, args: &Value) -> String {
        match args.get("customer").and_then(Value::as_str) {
            Some(c) => format!("List the orders of {c}"),
            None => "List all orders".into(),
        }
    }

    async fn run(&self, conn: &mut AnyConnection, args: &Value) -> Result<Value, ToolError> {
        let customer = args.get("customer").and_then(Value::as_str);
        let rows = orders::list(&mut *conn, customer).await?;
        let message = format!("{} order(s){}", rows.len(), customer.map(|c| format!(" of {c}")).unwrap_or_default());
        Ok(json!({ "orders": rows.iter().map(OrderRow::to_wire).collect::<Vec<_>>(), "message": message }))
    }
}

pub struct GetOrder(ToolSpec);

impl GetOrder {
    fn new() -> Self {
        Self(ToolSpec {
            name: "get_order".into(),
            description: "Look up one order".into(),
            input_schema: json!({
                "type": "object",
                "properties": { "order_id": order_id_schema() },
                "required": ["order_id"],
                "additionalProperties": false
            }),
            read_only: true,
            destructive: false,
        })
    }
}

#[async_trait]
impl Tool for GetOrder {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn summarize(&self, args: &Value) -> String {
        format!("Look up order {}", order_id(args).map(|i| i.to_string()).unwrap_or_else(|| "?".into()))
    }

    async fn run(&self, conn: &mut AnyConnection, args: &Value) -> Result<Value, ToolError> {
        let id = required_order_id(args)?;
        let order = orders::get(&mut *conn, id).await?.ok_or_else(|| ToolFailure(format!("order {id} does not exist")))?;
        let message =
            format!("Order {} ({}, {}) for {} is {}", order.id, order.item, dollars(order.amount_cents), order.customer, order.status);
        Ok(json!({ "order": order.to_wire(), "message": message }))
    }
}

pub struct CancelOrder(ToolSpec);

impl CancelOrder {
    fn new() -> Self {
        Self(ToolSpec {
            name: "cancel_order".into(),
            description: "Cancel an open order".into(),
            input_schema: json!({
                "type": "object",
                "properties": { "order_id": order_id_schema() },
                "required": ["order_id"],
                "additionalProperties": false
            }),
            read_only: false,
            destructive: true,
        })
    }
}

#[async_trait]
impl Tool for CancelOrder {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn summarize(&self, args: &Value) -> String {
        format!("Cancel order {}", order_id(args).map(|i| i.to_string()).unwrap_or_else(|| "?".into()))
    }

    fn assess(&self, _args: &Value, described: &Description) -> RiskAssessment {
        let mut factors = vec!["stops a customer's order".to_owned()];
        factors.extend(described.warnings.iter().cloned());
        RiskAssessment {
            factors,
            consequences: "The order is canceled for good: it cannot be reopened, only placed again.".into(),
            reversibility: Reversibility::Irreversible,
            confidence: None,
            warnings: Vec::new(),
        }
    }

    async fn describe(&self, conn: &mut AnyConnection, args: &Value, request: &str) -> anyhow::Result<Description> {
        let Some(order) = find(conn, args).await? else {
            return Ok(Description { summary: self.summarize(args), warnings: vec!["No such order: the call will fail".into()] });
        };
        let mut warnings: Vec<String> = unasked(request, "cancel", "a cancellation").into_iter().collect();
        if order.status != "open" {
            warnings.push(format!("Order {} is already {}: the call will fail", order.id, order.status));
        }
        Ok(Description { summary: format!("Cancel {} ({})", order_line(&order), dollars(order.amount_cents)), warnings })
    }

    async fn run(&self, conn: &mut AnyConnection, args: &Value) -> Result<Value, ToolError> {
        let order = load(conn, args).await?;
        if order.status != "open" {
            return Err(ToolFailure(format!("order {} is {}, only open orders can be canceled", order.id, order.status)).into());
        }
        if !orders::set_status(conn, order.id, "open", "canceled").await? {
            return Err(ToolFailure(format!("order {} changed while it was being canceled; nothing was done", order.id)).into());
        }
        Ok(json!({ "order_id": order.id, "status": "canceled", "message": format!("Canceled order {}", order.id) }))
    }
}

pub struct ProcessRefund(ToolSpec);

impl ProcessRefund {
    fn new() -> Self {
        Self(ToolSpec {
            name: "process_refund".into(),
            description: "Refund money on an order; without an amount, refunds what is left".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "order_id": order_id_schema(),
                    "amount": { "type": "number", "exclusiveMinimum": 0, "description": "Dollars to refund" }
                },
                "required": ["order_id"],
                "additionalProperties": false
            }),
            read_only: false,
            destructive: true,
        })
    }
}

#[async_trait]
impl Tool for ProcessRefund {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn summarize(&self, args: &Value) -> String {
        let order = order_id(args).map(|i| i.to_string()).unwrap_or_else(|| "?".into());
        match args.get("amount").and_then(Value::as_f64) {
            Some(amount) => format!("Refund {} on order {order}", dollars((amount * 100.0).round() as i64)),
            None => format!("Refund the rest of order {order}"),
        }
    }

    fn assess(&self, _args: &Value, described: &Description) -> RiskAssessment {
        let mut factors = vec!["moves money".to_owned()];
        factors.extend(described.warnings.iter().cloned());
        RiskAssessment {
            factors,
            // The card shows the summary just above: this says only what follows from it.
            consequences: "The money goes back to the customer and cannot be called back.".into(),
            reversibility: Reversibility::Irreversible,
            confidence: None,
            warnings: Vec::new(),
        }
    }

    /// "Refund $1,200.00 (everything left) on order 1004 · bob · Barista course".
    async fn describe(&self, conn: &mut AnyConnection, args: &Value, request: &str) -> anyhow::Result<Description> {
        let Some(order) = find(conn, args).await? else {
            return Ok(Description { summary: self.summarize(args), warnings: vec!["No such order: the call will fail".into()] });
        };
        let left = order.amount_cents - order.refunded_cents;
        let mut warnings: Vec<String> = unasked(request, "refund", "a refund").into_iter().collect();
        let summary = match args.get("amount").and_then(Value::as_f64) {
            Some(amount) => {
                let cents = (amount * 100.0).round() as i64;
                if cents > left {
                    warnings.push(format!("{} is more than the {} left to refund: the call will fail", dollars(cents), dollars(left)));
                }
                format!("Refund {} of {} left on {}", dollars(cents), dollars(left), order_line(&order))
            }
            None => {
                if left <= 0 {
                    warnings.push(format!("Nothing is left to refund on order {}: the call will fail", order.id));
                }
                format!("Refund {} (everything left) on {}", dollars(left), order_line(&order))
            }
        };
        if order.status == "canceled" {
            warnings.push(format!("Order {} is canceled: the call will fail", order.id));
        }
        Ok(Description { summary, warnings })
    }

    async fn run(&self, conn: &mut AnyConnection, args: &Value) -> Result<Value, ToolError> {
        let order = load(conn, args).await?;
        if order.status == "canceled" {
            return Err(ToolFailure(format!("order {} is canceled", order.id)).into());
        }
        let left = order.amount_cents - order.refunded_cents;
        let cents = match args.get("amount").and_then(Value::as_f64) {
            Some(amount) => (amount * 100.0).round() as i64,
            None => left,
        };
        if cents <= 0 || cents > left {
            return Err(ToolFailure(format!(
                "cannot refund {} on order {}: {} is left to refund",
                dollars(cents.max(0)),
                order.id,
                dollars(left)
            ))
            .into());
        }
        if !orders::add_refund(conn, &order, cents).await? {
            return Err(ToolFailure(format!("order {} changed while it was being refunded; nothing was refunded", order.id)).into());
        }
        Ok(json!({
            "order_id": order.id,
            "refunded": cents as f64 / 100.0,
            "message": format!("Refunded {} on order {}", dollars(cents), order.id)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::dollars;

    #[test]
    fn dollars_are_grouped_by_thousands() {
        assert_eq!(dollars(0), "$0.00");
        assert_eq!(dollars(5), "$0.05");
        assert_eq!(dollars(99_999), "$999.99");
        assert_eq!(dollars(120_000), "$1,200.00");
        assert_eq!(dollars(123_456_789), "$1,234,567.89");
    }
}
