//! The policy replay section: `engine::replay::replay` (what `countersign policy replay` runs
//! once it has read the calls) over synthetic recorded calls, in this process on one thread: a
//! pure function, so no server is needed. The database read before it is not timed. Target:
//! 100,000 calls in under 2 s on one core.

use std::time::Instant;

use engine::{
    agents::AgentsConfig,
    policy::Spent,
    replay::{self, Asked, RecordedCall, Then},
    tools::Registry,
};
use serde_json::json;

use crate::{Report, Sizes, target_line};

const TOOLS: &str = "tools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n";

/// Refunds and cancellations are asked.
const LIVE: &str = "[[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\n\
    [[agents.gates]]\nname = \"cancellations\"\nkind = \"tools\"\ntools = [\"cancel_order\"]\n";

/// Root decides refunds and finance big ones (a CEL rule), lookups are asked, the model's spend
/// and confidence are watched: each kind of gate the replay evaluates for every call.
const DRAFT: &str = "[[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\napprovers = [\"user:root\"]\n\
    [[agents.gates]]\nname = \"big-refunds\"\nkind = \"rule\"\nrule = \"tool == 'process_refund' && args.amount > 100\"\n\
    approvers = [\"group:finance\"]\n\
    [[agents.gates]]\nname = \"lookups\"\nkind = \"tools\"\ntools = [\"get_order\"]\n\
    [[agents.gates]]\nname = \"spend\"\nkind = \"budget\"\ntoken_threshold = 50000\nper = \"conversation\"\n\
    [[agents.gates]]\nname = \"unsure\"\nkind = \"confidence\"\nconfidence_threshold = 0.5\n";

fn config(gates: &str, origin: &str, registry: &Registry) -> anyhow::Result<AgentsConfig> {
    let text = format!("[[groups]]\nname = \"finance\"\nmembers = [\"bob\", \"root\"]\n[[agents]]\nname = \"support\"\n{TOOLS}{gates}");
    AgentsConfig::parse(&text, origin, registry)
}

const DAY_MS: i64 = 86_400_000;

/// Call `i` of `count` over 30 days: mostly lookups, then refunds (a few big), cancellations and
/// lists; refunds and cancellations asked and decided by one of three people; the spend growing
/// along each conversation of ten calls.
fn synthetic(i: usize, count: usize) -> RecordedCall {
    let (order, amount) = (1001 + (i % 6), if i % 40 == 13 { 250.0 } else { 5.0 });
    let (tool, args) = match i % 20 {
        0..=11 => ("get_order", json!({ "order_id": order })),
        12..=16 => ("process_refund", json!({ "order_id": order, "amount": amount })),
        17 | 18 => ("cancel_order", json!({ "order_id": order })),
        _ => ("list_orders", json!({ "customer": "alice" })),
    };
    let then = match tool {
        "process_refund" | "cancel_order" => Then::Asked(Asked {
            gate: if tool == "process_refund" { "refunds" } else { "cancellations" }.to_owned(),
            outcome: if i.is_multiple_of(7) { "rejected" } else { "approved" }.to_owned(),
            deciders: vec![["alice", "bob", "carol"][i % 3].to_owned()],
            approvers: None,
            rules: Default::default(),
            in_chat: false,
        }),
        _ => Then::NotAsked,
    };
    // The model's usage so far (`domain::wire::Usage`, reached through `Spent`).
    let mut spent = Spent::default().task;
    spent.input_tokens = (i % 10) as u64 * 6_000;
    RecordedCall {
        call_id: format!("call_{i:032x}"),
        conversation_id: format!("conversation-{}", i / 10),
        agent: "support".into(),
        tool: tool.into(),
        args,
        requester: Some(["alice", "bob"][i % 2].into()),
        at_ms: 30 * DAY_MS * i as i64 / count.max(1) as i64,
        // Only asked calls keep a confidence; the others count as unsure, as recorded ones do.
        confidence: matches!(then, Then::Asked(_)).then_some([0.9, 0.4][i % 2]),
        spent_task: spent,
        spent_conversation: spent,
        then,
        granted: None,
    }
}

/// Section 10: replays `sizes.replay_calls` synthetic calls against a draft, three times, and
/// reports the fastest.
pub fn replay(sizes: &Sizes, report: &mut Report) -> anyhow::Result<()> {
    let registry = Registry::builtin();
    let (live, draft) = (config(LIVE, "live", &registry)?, config(DRAFT, "draft", &registry)?);
    let count = sizes.replay_calls;
    let calls: Vec<RecordedCall> = (0..count).map(|i| synthetic(i, count)).collect();
    // The people the draft's approvers stand for, as the database would have them.
    let directory = replay::Directory { users: ["alice", "bob", "carol", "root"].map(str::to_owned).to_vec(), ..Default::default() };
    let input = replay::Replay {
        draft: &draft,
        live: &live,
        registry: &registry,
        calls: &calls,
        grants: &[],
        directory: &directory,
        since_ms: 0,
        until_ms: 30 * DAY_MS,
        agent: None,
    };
    let mut fastest = f64::INFINITY;
    let mut stopped = 0;
    for _ in 0..3 {
        let started = Instant::now();
        let result = replay::replay(&input);
        fastest = fastest.min(started.elapsed().as_secs_f64());
        stopped = result.summary.asked_draft;
    }
    let rate = count as f64 / fastest;
    report.section(
        "10. Policy replay (engine::replay::replay in this process, one thread; the database read not timed)",
        &["recorded calls", "gates in the draft", "stopped by the draft", "seconds (fastest of 3)", "calls/s"],
        vec![vec![
            count.to_string(),
            draft.agents[0].gates.len().to_string(),
            stopped.to_string(),
            format!("{fastest:.3}"),
            format!("{rate:.0}"),
        ]],
    );
    report.lines([target_line(
        "replay of 100,000 recorded calls (at this rate)",
        100_000.0 / rate,
        "s",
        2.0,
        "docs/config.md, \"The policy's life\" (each call is put to every gate of its agent: a CEL rule is the dearest)",
    )]);
    Ok(())
}
