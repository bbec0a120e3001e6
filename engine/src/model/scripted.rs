//! The scripted model: a deterministic demo planner, not an LLM. It understands a few requests
//! about the demo orders (see README) and turns tool results and rejections into a plain answer.

use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{ChatMessage, Model, ModelReply, ModelRequest, ProposedCall};

/// Counts its calls so tests can prove the model is not called while approvals are pending.
#[derive(Default)]
pub struct ScriptedModel {
    calls: AtomicU64,
}

impl ScriptedModel {
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }
}

pub const HELP: &str = "I am Countersign's scripted demo agent. Try: \"list orders of alice\", \"look up order 1001\", \
\"refund order 1001\", \"refund $25 on order 1002\", \"cancel order 1003 and 1005\", \"cancel all orders of alice\", \
\"refund an order\" or \"ask me which order to look up\" (I ask you back).";

#[derive(Debug, PartialEq)]
enum Intent {
    List {
        customer: Option<String>,
    },
    Get(Vec<i64>),
    /// Refunds and cancellations, in the order asked, each with its own amount.
    Act(Vec<Action>),
    /// "cancel/refund all orders of NAME": list first, then act on each open order.
    ForAll {
        action: &'static str,
        customer: String,
    },
    Help,
}

fn numbers(text: &str) -> Vec<i64> {
    text.split(|c: char| !c.is_ascii_digit()).filter(|w| w.len() >= 3).filter_map(|w| w.parse().ok()).collect()
}

fn amount(text: &str) -> Option<f64> {
    let words: Vec<&str> = text.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        if let Some(rest) = w.strip_prefix('$') {
            return rest.trim_end_matches([',', '.']).parse().ok();
        }
        if words.get(i + 1).is_some_and(|n| n.starts_with("dollar")) {
            return w.parse().ok();
        }
    }
    None
}

/// The word after `marker`, as typed (tools validate it; the UI shows it as text).
fn customer_after(text: &str, marker: &str) -> Option<String> {
    let at = text.find(marker)? + marker.len();
    let name = text[at..].split_whitespace().next()?.trim_end_matches(['?', '.', ',', '!']);
    (!name.is_empty()).then(|| name.to_owned())
}

/// One call the request asks for.
#[derive(Debug, PartialEq)]
struct Action {
    tool: &'static str,
    order: i64,
    /// Refunds only: the amount asked for (None: everything left).
    amount: Option<f64>,
}

/// The refunds and cancellations in a request, clause by clause: "refund $10 on order 1004 and
/// cancel order 1006" is a $10 refund and a cancellation; a clause without a verb continues the
/// previous one, and its amount too ("refund $1 on order 1002 and 1003" is $1 on each).
fn actions(text: &str) -> Vec<Action> {
    let (mut tool, mut carried_amount) = (None, None);
    let mut out = Vec::new();
    for clause in text.split(" and ").flat_map(|c| c.split([',', ';'])) {
        let verb = if clause.contains("refund") {
            Some("process_refund")
        } else if clause.contains("cancel") {
            Some("cancel_order")
        } else {
            None
        };
        if verb.is_some() && verb != tool {
            carried_amount = None;
        }
        tool = verb.or(tool);
        let Some(tool) = tool else { continue };
        let amount = amount(clause);
        if amount.is_some() {
            carried_amount = amount;
        }
        // "$250" is an amount, not an order number.
        for order in numbers(clause).into_iter().filter(|id| Some(*id as f64) != amount) {
            let amount = if tool == "process_refund" { carried_amount } else { None };
            out.push(Action { tool, order, amount });
        }
    }
    out
}

fn intent(text: &str) -> Intent {
    let t = text.to_lowercase();
    let customer = customer_after(&t, " of ").or_else(|| customer_after(&t, " for customer "));
    if (t.contains("cancel") || t.contains("refund"))
        && t.contains("all")
        && let Some(customer) = customer
    {
        let action = if t.contains("cancel") { "cancel_order" } else { "process_refund" };
        return Intent::ForAll { action, customer };
    }
    let ids = numbers(&t);
    if t.contains("refund") || t.contains("cancel") {
        let actions = actions(&t);
        if !actions.is_empty() {
            return Intent::Act(actions);
        }
    }
    if t.contains("order") && (t.contains("list") || t.contains("show") || t.contains("all")) {
        return Intent::List { customer };
    }
    if !ids.is_empty() {
        return Intent::Get(ids);
    }
    Intent::Help
}

const ASK_USER: &str = domain::naming::ASK_USER;
const PROPOSE_PLAN: &str = domain::naming::PROPOSE_PLAN;

/// With a `plan` gate (the agent has `propose_plan`), several changes are proposed as one plan
/// first; the calls come once it is approved.
fn as_plan(reply: ModelReply, can_plan: bool) -> ModelReply {
    let changes = reply.calls.iter().filter(|c| c.tool == "cancel_order" || c.tool == "process_refund").count();
    if !can_plan || changes < 2 {
        return reply;
    }
    let steps: Vec<Value> = reply.calls.iter().map(|c| json!({ "tool": c.tool, "args": c.args })).collect();
    let text = reply.text.map(|t| t.replace(" once approved", " once you approve the plan"));
    ModelReply { text, calls: vec![call(PROPOSE_PLAN, json!({ "steps": steps }))], usage: None }
}

/// A request that needs something only the user knows: "refund an order" (which one?) or "ask me
/// which order to look up" (a choice).
fn question_for(text: &str) -> Option<ModelReply> {
    let t = text.to_lowercase();
    if t.contains("ask me") {
        return Some(ModelReply {
            text: Some("Let me ask you first.".into()),
            calls: vec![call(ASK_USER, json!({ "question": "Which order should I look up?", "options": ["1001", "1002", "1003"] }))],
            usage: None,
        });
    }
    let verb = if t.contains("refund") {
        "refund"
    } else if t.contains("cancel") {
        "cancel"
    } else {
        return None;
    };
    (numbers(&t).is_empty() && !t.contains(" all ")).then(|| ModelReply {
        text: Some("I need to know which order first.".into()),
        calls: vec![call(ASK_USER, json!({ "question": format!("Which order should I {verb}? Give its number.") }))],
        usage: None,
    })
}

/// How sure the scripted model is of a call it read from the request (see [`confidence`]).
const SURE: f64 = 0.9;

fn call(tool: &str, args: Value) -> ProposedCall {
    ProposedCall { id: format!("call_{}", uuid::Uuid::now_v7().simple()).into(), tool: tool.into(), args, confidence: Some(SURE) }
}

/// The scripted model's confidence in its calls (docs/config.md, "Confidence"): 0.9 for what the
/// request names, 0.7 for calls it derived itself (each order of "cancel all orders of alice"),
/// and 0.4 for anything when the user hedges ("maybe", "perhaps", "not sure", "i think").
fn confidence(request: &str, derived: bool) -> f64 {
    let t = request.to_lowercase();
    if ["maybe", "perhaps", "not sure", "i think"].iter().any(|h| t.contains(h)) {
        0.4
    } else if derived {
        0.7
    } else {
        SURE
    }
}

/// Deterministic token counts: one token per four characters of what it read (the messages, and
/// 40 per tool offered) and of what it wrote (the text and each call's arguments, and 10 per call).
fn count_tokens(request: &ModelRequest<'_>, reply: &ModelReply) -> domain::wire::Usage {
    let read: usize = request
        .messages
        .iter()
        .map(|m| match m {
            ChatMessage::User { text } => text.len(),
            ChatMessage::Assistant { text, calls } => {
                text.as_deref().map_or(0, str::len) + calls.iter().map(|c| c.tool.len() + c.args.to_string().len()).sum::<usize>()
            }
            ChatMessage::ToolResult { output, .. } => output.to_string().len(),
            ChatMessage::AnswerRejected { draft, reason } => draft.len() + reason.as_deref().map_or(0, str::len),
        })
        .sum();
    let written = reply.text.as_deref().map_or(0, str::len) + reply.calls.iter().map(|c| c.args.to_string().len() + 40).sum::<usize>();
    domain::wire::Usage {
        input_tokens: (read.div_ceil(4) + 40 * request.tools.len()) as u64,
        output_tokens: written.div_ceil(4) as u64,
        cost_usd: None,
    }
}

fn plan(intent: Intent) -> ModelReply {
    let (text, calls) = match intent {
        Intent::List { customer } => {
            (None, vec![call("list_orders", customer.map(|c| json!({ "customer": c })).unwrap_or_else(|| json!({})))])
        }
        Intent::Get(ids) => (None, ids.into_iter().map(|id| call("get_order", json!({ "order_id": id }))).collect()),
        Intent::Act(actions) => (
            Some(format!("I will {} once approved.", actions_phrase(&actions))),
            actions
                .iter()
                .map(|a| match a.amount {
                    Some(amount) => call(a.tool, json!({ "order_id": a.order, "amount": amount })),
                    None => call(a.tool, json!({ "order_id": a.order })),
                })
                .collect(),
        ),
        Intent::ForAll { customer, .. } => {
            (Some(format!("Let me find the orders of {customer} first.")), vec![call("list_orders", json!({ "customer": customer }))])
        }
        Intent::Help => (Some(HELP.to_owned()), Vec::new()),
    };
    ModelReply { text, calls, usage: None }
}

/// "refund orders 1001, 1002 and cancel order 1006", "refund $10.00 on order 1004".
fn actions_phrase(actions: &[Action]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < actions.len() {
        // Consecutive actions of one kind and amount read as one phrase.
        let same = actions[i..].iter().take_while(|a| a.tool == actions[i].tool && a.amount == actions[i].amount).count();
        let ids: Vec<i64> = actions[i..i + same].iter().map(|a| a.order).collect();
        let verb = if actions[i].tool == "cancel_order" { "cancel" } else { "refund" };
        parts.push(match actions[i].amount {
            Some(amount) => format!("{verb} ${amount:.2} on {}", orders_phrase(&ids)),
            None => format!("{verb} {}", orders_phrase(&ids)),
        });
        i += same;
    }
    parts.join(" and ")
}

fn orders_phrase(ids: &[i64]) -> String {
    let list: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
    match list.len() {
        1 => format!("order {}", list[0]),
        _ => format!("orders {}", list.join(", ")),
    }
}

/// One sentence about a finished call, including why it did not run.
fn describe(tool: &str, ok: bool, output: &Value, note: Option<&str>) -> String {
    let status = output.get("status").and_then(Value::as_str);
    let reason = output.get("reason").and_then(Value::as_str);
    let mut sentence = if status == Some("deferred") {
        let guidance = output.get("guidance").and_then(Value::as_str).unwrap_or_default();
        format!("A reviewer held {tool} back with guidance: \"{guidance}\". I did not run it; tell me how to continue.")
    } else if status == Some("rejected") && output.get("repeat") == Some(&Value::Bool(true)) {
        // The instruction in `reason` is for a model; the user hears why in plain words.
        match output.get("earlier_reason").and_then(Value::as_str).filter(|r| !r.is_empty()) {
            Some(r) => format!("I did not run {tool} again: the same call was already rejected in this chat ({}).", super::clause(r)),
            None => format!("I did not run {tool} again: the same call was already rejected in this chat."),
        }
    } else if status == Some("rejected") {
        match reason {
            Some(r) if !r.trim().is_empty() => format!("The reviewer rejected {tool} (reason: {}).", super::clause(r)),
            _ => format!("The reviewer rejected {tool}."),
        }
    } else if let Some(message) = output.get("message").and_then(Value::as_str) {
        if ok { format!("{message}.") } else { format!("{tool} failed: {message}.") }
    } else if let Some(error) = output.get("error").and_then(Value::as_str) {
        format!("{tool} failed: {error}.")
    } else {
        format!("{tool} finished.")
    };
    if note.is_some() {
        sentence.push_str(" (A reviewer edited the arguments before approving.)");
    }
    sentence
}

fn answer(results: &[(&str, bool, &Value, Option<&str>)]) -> ModelReply {
    let text = results.iter().map(|(tool, ok, output, note)| describe(tool, *ok, output, *note)).collect::<Vec<_>>().join(" ");
    ModelReply { text: Some(text), calls: Vec::new(), usage: None }
}

#[async_trait]
impl Model for ScriptedModel {
    async fn respond(&self, request: &ModelRequest<'_>) -> anyhow::Result<ModelReply> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let mut reply = reply(request);
        if let Some(ChatMessage::User { text }) = request.messages.iter().rev().find(|m| matches!(m, ChatMessage::User { .. })) {
            for call in &mut reply.calls {
                call.confidence = Some(confidence(text, call.confidence != Some(SURE)));
            }
        }
        reply.usage = Some(count_tokens(request, &reply));
        Ok(reply)
    }
}

/// What the scripted model answers (its calls' confidence and its usage are added by `respond`).
fn reply(request: &ModelRequest<'_>) -> ModelReply {
    {
        let messages = &request.messages;
        // A reviewer sent the final answer back: answer again, saying what changed.
        if let Some(ChatMessage::AnswerRejected { draft, reason }) = messages.last() {
            let note =
                reason.as_deref().map(|r| format!("Revised after review (\"{r}\")")).unwrap_or_else(|| "Revised after review".into());
            let draft =
                draft.split_once(": ").filter(|(head, _)| head.starts_with("Revised after review")).map_or(draft.as_str(), |(_, d)| d);
            return ModelReply { text: Some(format!("{note}: {draft}")), calls: Vec::new(), usage: None };
        }
        let Some(user_at) = messages.iter().rposition(|m| matches!(m, ChatMessage::User { .. })) else {
            return ModelReply { text: Some(HELP.to_owned()), calls: Vec::new(), usage: None };
        };
        let ChatMessage::User { text } = &messages[user_at] else { unreachable!("found by rposition") };
        let turn = &messages[user_at + 1..];
        // A supervisor (an agent with an `ask_<worker>` tool) hands every request to its worker.
        let delegate = request
            .tools
            .iter()
            .filter(|t| t.name != ASK_USER)
            .find_map(|t| t.name.strip_prefix("ask_").map(|worker| (t.name.clone(), worker.to_owned())));
        let can_ask = request.tools.iter().any(|t| t.name == ASK_USER);
        let can_plan = request.tools.iter().any(|t| t.name == PROPOSE_PLAN);
        if turn.is_empty() {
            if can_ask && let Some(question) = question_for(text) {
                return question;
            }
            if let Some((tool, worker)) = delegate {
                return ModelReply {
                    text: Some(format!("I will ask {worker} to handle this.")),
                    calls: vec![call(&tool, json!({ "task": text }))],
                    usage: None,
                };
            }
            return as_plan(plan(intent(text)), can_plan);
        }
        // Results of the latest batch of calls (everything after the last assistant message).
        let last_assistant = turn.iter().rposition(|m| matches!(m, ChatMessage::Assistant { .. })).unwrap_or(0);
        let results: Vec<(&str, bool, &Value, Option<&str>)> = turn[last_assistant..]
            .iter()
            .filter_map(|m| match m {
                ChatMessage::ToolResult { tool, ok, output, note, .. } => Some((tool.as_str(), *ok, output, note.as_deref())),
                _ => None,
            })
            .collect();
        // The user answered the question: the request with the answer is the request now; a
        // question left unanswered ends the turn.
        if let [(ASK_USER, ok, output, _)] = results.as_slice() {
            return match output["answer"].as_str() {
                Some(answer) if *ok => plan(intent(&format!("{text} {answer}"))),
                _ => ModelReply { text: Some("All right, I will leave it then.".into()), calls: Vec::new(), usage: None },
            };
        }
        // Second step of "cancel/refund all orders of NAME": act on each open order listed.
        if let Intent::ForAll { action, customer } = intent(text)
            && let [("list_orders", true, output, _)] = results.as_slice()
        {
            let open: Vec<i64> = output["orders"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|o| o["status"] == "open")
                .filter_map(|o| o["id"].as_i64())
                .collect();
            if open.is_empty() {
                return ModelReply { text: Some(format!("{customer} has no open orders.")), calls: Vec::new(), usage: None };
            }
            let verb = if action == "cancel_order" { "cancel" } else { "refund" };
            // Calls it worked out itself, not ones the request named.
            let derived = |id| ProposedCall { confidence: None, ..call(action, json!({ "order_id": id })) };
            let reply = ModelReply {
                text: Some(format!("{customer} has {} open: I will {verb} each once approved.", orders_phrase(&open))),
                calls: open.into_iter().map(derived).collect(),
                usage: None,
            };
            return as_plan(reply, can_plan);
        }
        // The plan was approved (perhaps edited): exactly its steps, now.
        if let [(PROPOSE_PLAN, true, output, _)] = results.as_slice() {
            let calls: Vec<ProposedCall> = output["steps"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|step| Some(call(step["tool"].as_str()?, step["args"].clone())))
                .collect();
            return ModelReply { text: Some("The plan is approved; going ahead.".into()), calls, usage: None };
        }
        answer(&results)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeat_refusal_is_told_to_the_user_without_the_instruction_meant_for_a_model() {
        let output = serde_json::json!({
            "status": "rejected", "repeat": true, "earlier_reason": "keep it",
            "reason": "this exact call was already rejected in this conversation (keep it); do not propose it again"
        });
        assert_eq!(
            describe("cancel_order", false, &output, None),
            "I did not run cancel_order again: the same call was already rejected in this chat (keep it)."
        );
        let decided = serde_json::json!({ "status": "rejected", "reason": "too much" });
        assert_eq!(describe("process_refund", false, &decided, None), "The reviewer rejected process_refund (reason: too much).");
        // A reason that ends a sentence of its own is not given a second period.
        let with_period = serde_json::json!({ "status": "rejected", "reason": "testing reject all." });
        assert_eq!(
            describe("process_refund", false, &with_period, None),
            "The reviewer rejected process_refund (reason: testing reject all)."
        );
        // Rejected without a reason: none is said (none is made up either,
        // orchestrator/decisions/decide.rs).
        let without = serde_json::json!({ "status": "rejected" });
        assert_eq!(describe("process_refund", false, &without, None), "The reviewer rejected process_refund.");
    }

    #[test]
    fn a_request_only_the_user_can_complete_is_asked_back() {
        let which = question_for("refund an order").unwrap();
        assert_eq!(which.calls[0].tool, ASK_USER);
        assert_eq!(which.calls[0].args, json!({ "question": "Which order should I refund? Give its number." }));
        assert_eq!(question_for("ask me which order to look up").unwrap().calls[0].args["options"], json!(["1001", "1002", "1003"]));
        assert!(question_for("refund order 1001").is_none() && question_for("cancel all orders of alice").is_none());
        assert!(question_for("list orders").is_none());
        // The answer completes the request.
        assert_eq!(intent("refund an order 1002"), Intent::Act(vec![Action { tool: "process_refund", order: 1002, amount: None }]));
        assert_eq!(intent("ask me which order to look up 1003"), Intent::Get(vec![1003]));
    }

    #[test]
    fn requests_are_understood() {
        let refund = |order, amount| Action { tool: "process_refund", order, amount };
        let cancel = |order| Action { tool: "cancel_order", order, amount: None };
        assert_eq!(intent("Please refund order 1001"), Intent::Act(vec![refund(1001, None)]));
        assert_eq!(intent("refund $25 on order 1002"), Intent::Act(vec![refund(1002, Some(25.0))]));
        assert_eq!(intent("refund $250 on order 1004"), Intent::Act(vec![refund(1004, Some(250.0))]));
        assert_eq!(intent("refund order 1001 and 1002"), Intent::Act(vec![refund(1001, None), refund(1002, None)]));
        assert_eq!(intent("cancel order 1003 and 1005"), Intent::Act(vec![cancel(1003), cancel(1005)]));
        // Each clause keeps its own verb and amount (these once became full refunds).
        assert_eq!(intent("refund $10 on order 1004 and cancel order 1006"), Intent::Act(vec![refund(1004, Some(10.0)), cancel(1006)]));
        assert_eq!(intent("refund $1 on order 1002 and 1003"), Intent::Act(vec![refund(1002, Some(1.0)), refund(1003, Some(1.0))]));
        assert_eq!(intent("cancel order 1006 and refund $5 on order 1001"), Intent::Act(vec![cancel(1006), refund(1001, Some(5.0))]));
        assert_eq!(intent("Cancel all orders of Alice"), Intent::ForAll { action: "cancel_order", customer: "alice".into() });
        assert_eq!(intent("list orders of bob"), Intent::List { customer: Some("bob".into()) });
        assert_eq!(intent("what about order 1004?"), Intent::Get(vec![1004]));
        assert_eq!(intent("hello"), Intent::Help);
    }

    #[test]
    fn the_plan_says_what_each_call_does() {
        let reply = plan(intent("refund $10 on order 1004 and cancel order 1006"));
        assert_eq!(reply.text.as_deref(), Some("I will refund $10.00 on order 1004 and cancel order 1006 once approved."));
        assert_eq!(reply.calls[0].args, json!({ "order_id": 1004, "amount": 10.0 }));
        assert_eq!(reply.calls[1].args, json!({ "order_id": 1006 }));
        let reply = plan(intent("refund order 1001 and 1002"));
        assert_eq!(reply.text.as_deref(), Some("I will refund orders 1001, 1002 once approved."));
    }

    #[test]
    fn a_rejection_reason_reaches_the_answer() {
        let output = json!({ "status": "rejected", "reason": "duplicate refund" });
        let reply = answer(&[("process_refund", false, &output, None)]);
        assert!(reply.text.unwrap().contains("duplicate refund"));
    }
}
