//! Gates on what the model measures: a budget gate asks once the task (or conversation) has spent
//! more tokens or dollars than it allows, and the card and the queue show the spend; a confidence
//! gate asks when the model is less sure of a call than its threshold. Usage is recorded per model
//! step (`model-usage`), priced from `[prices]`, and added up in the task summary and the chat.

use domain::{EventBody, TaskStatus, wire::Usage};
use serde_json::json;

use crate::helpers::{Options, TestApp, named, spawn_app_with};

const TOOLS: &str = "tools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]";

async fn app_with(config: &str) -> TestApp {
    let toml = format!(
        "[prices]\nscripted = {{ input_per_million = 1000.0, output_per_million = 2000.0 }}\n\n[[agents]]\nname = \"support\"\n{TOOLS}\n{config}"
    );
    spawn_app_with(Options { agents_toml: Some(toml), ..Default::default() }).await
}

/// The usage of every model step of the conversation (of one task, when given), added up.
fn usage_of(events: &[domain::Event], task: Option<&str>) -> Usage {
    let mut total = Usage::default();
    for event in named(events, "model-usage") {
        if let EventBody::ModelUsage { task_id, usage, model } = &event.body {
            assert_eq!(model, "scripted");
            if task.is_none_or(|t| t == task_id.as_str()) {
                total.add(usage);
            }
        }
    }
    total
}

#[tokio::test]
async fn a_budget_gate_lets_calls_through_until_the_task_has_spent_its_tokens_then_asks_with_the_spend() {
    let app = app_with("[[agents.gates]]\nname = \"budget\"\nkind = \"budget\"\ntoken_threshold = 250\n").await;
    let c = app.create_conversation().await;
    // Step 1 lists the orders (under the budget: it runs); step 2 reads the listing, which
    // takes the task over 250 tokens, so its cancellations wait.
    let (task, approvals) = app.pending_turn(&c, "cancel all orders of alice", 3).await;
    let detail = app.detail(&c).await;
    let listing = detail.view.cards().find(|card| card.tool == "list_orders").expect("the listing ran");
    assert!(listing.approval.is_none() && listing.result.is_some(), "the first step was under the budget: {listing:?}");
    let spent = usage_of(&detail.events, Some(&task));
    assert!(spent.tokens() > 250, "{spent:?}");
    for approval in &approvals {
        assert_eq!(approval.gate, "budget");
        let spend = approval.context.spend.as_ref().expect("a budget gate shows the spend");
        assert_eq!((spend.token_threshold, spend.cost_threshold, spend.per.as_str()), (Some(250), None, "task"));
        assert_eq!(spend.spent, spent, "the spend is the task's usage so far, this step included");
    }
    let card = detail.view.card(&approvals[0].call_id).unwrap();
    assert_eq!(card.approval.as_ref().unwrap().spend, approvals[0].context.spend, "the chat's card shows the same spend");

    // Prices turn tokens into dollars, in the task summary and the conversation's total.
    let expected = (spent.input_tokens as f64 * 1000.0 + spent.output_tokens as f64 * 2000.0) / 1e6;
    assert!((spent.cost_usd.unwrap() - expected).abs() < 1e-9, "{spent:?} vs {expected}");
    app.post_json(&format!("/api/tasks/{task}/reject-all"), json!({ "reason": "over budget" })).await;
    app.wait_task(&task, TaskStatus::Completed).await;
    let (status, body) = app.get_json(&format!("/api/tasks/{task}")).await;
    assert_eq!(status, 200, "{body}");
    let events = app.detail(&c).await.events;
    let summary: Usage = serde_json::from_value(body["summary"]["usage"].clone()).unwrap();
    assert_eq!(summary, usage_of(&events, Some(&task)), "the summary adds up every step, the answer included");
    assert_eq!(app.detail(&c).await.view.usage, usage_of(&events, None));
}

#[tokio::test]
async fn a_conversation_budget_counts_earlier_turns_and_a_dollar_budget_reads_the_price() {
    let app = app_with("[[agents.gates]]\nname = \"wallet\"\nkind = \"budget\"\ncost_threshold = 0.5\nper = \"conversation\"\n").await;
    let c = app.create_conversation().await;
    // One lookup costs well under $0.50 (about 200 tokens at $1,000 per million in).
    let first = app.say(&c, "look up order 1001").await;
    app.wait_task(&first, TaskStatus::Completed).await;
    let spent = usage_of(&app.detail(&c).await.events, None);
    assert!(spent.cost_usd.unwrap() < 0.5, "{spent:?}");
    let mut turns = 1;
    // Turn after turn the conversation's spend grows until a call has to ask.
    let approvals = loop {
        turns += 1;
        assert!(turns < 10, "the conversation never went over its budget");
        let task = app.say(&c, "look up order 1002").await;
        crate::helpers::eventually("the turn to end or stop", || async {
            let status = app.task_status(&task).await;
            (status == TaskStatus::Completed || status == TaskStatus::InputRequired).then_some(())
        })
        .await;
        let pending = app.pending_approvals_of(&task).await;
        if !pending.is_empty() {
            break pending;
        }
    };
    let spend = approvals[0].context.spend.clone().unwrap();
    assert_eq!((spend.per.as_str(), spend.cost_threshold, spend.token_threshold), ("conversation", Some(0.5), None));
    assert!(spend.spent.cost_usd.unwrap() > 0.5, "{spend:?}");
}

#[tokio::test]
async fn a_confidence_gate_asks_only_when_the_model_is_unsure_and_the_card_shows_how_sure() {
    let app = app_with("[[agents.gates]]\nname = \"unsure\"\nkind = \"confidence\"\nconfidence_threshold = 0.8\n").await;
    let c = app.create_conversation().await;
    // The scripted model is 0.9 sure of what the request names: it runs.
    let sure = app.say(&c, "cancel order 1003").await;
    app.wait_task(&sure, TaskStatus::Completed).await;
    assert_eq!(app.order(1003).await.status, "canceled");
    // A hedged request makes it 0.4 sure: a human decides, and sees the number.
    let (_task, approvals) = app.pending_turn(&c, "maybe cancel order 1005", 1).await;
    assert_eq!(approvals[0].gate, "unsure");
    assert_eq!(approvals[0].assessment.confidence, Some(0.4));
    let card = app.detail(&c).await.view.card(&approvals[0].call_id).cloned().unwrap();
    assert_eq!(card.approval.unwrap().assessment.unwrap().confidence, Some(0.4));
    assert_eq!(app.order(1005).await.status, "open", "nothing ran before the decision");
}
