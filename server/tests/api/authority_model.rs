//! A model-based test of who may decide a call and when it runs. A reference model, written from
//! docs/security.md ("The authority rules", "A call's requirement") and not from the engine's
//! code, says for a generated policy — gates in random order, with approvers, groups, quorum and
//! four-eyes — and a generated sequence of decisions by different people which decisions are
//! accepted and whether the call has run. Each case runs against a real server on the suite's
//! database (SQLite, and PostgreSQL in its second run); after every step the server must agree
//! with the model: an accepted decision where the model accepts one, a refusal that changed
//! nothing where it refuses, and the refund made exactly when the model says the call runs.
//!
//! `./x test` runs `COUNTERSIGN_MODEL_CASES` cases (default 16) from a fixed seed;
//! `scripts/authority-model.sh` runs many more from a random seed and prints it. A failure
//! prints the shrunk case; it then becomes a named test below.

use std::collections::BTreeSet;

use domain::TaskStatus;
use proptest::{
    prelude::*,
    test_runner::{Config, RngSeed, TestCaseError, TestRunner},
};
use serde_json::json;

use crate::helpers::{Options, TestApp, spawn_app_with};

/// The people of the test server: alice owns the conversation, root is the admin.
const PEOPLE: [&str; 3] = ["alice", "bob", "root"];
const APPROVER_NAMES: [&str; 4] = ["user:bob", "user:alice", "group:finance", "role:admin"];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// `kind = "tools"`, process_refund.
    Refunds,
    /// `kind = "rule"`, `args.amount > 100`.
    Big,
    /// `kind = "all"`.
    All,
}

#[derive(Clone, Debug)]
struct GateSpec {
    kind: Kind,
    approvers: Vec<&'static str>,
    quorum: u32,
    four_eyes: bool,
}

#[derive(Clone, Debug)]
struct Case {
    /// Members of the file's group `finance` (`carol` has no account: she stands for no one).
    finance: Vec<&'static str>,
    gates: Vec<GateSpec>,
    amount: u32,
    /// Who approves (true) or rejects (false), in order.
    steps: Vec<(&'static str, bool)>,
}

fn case() -> impl Strategy<Value = Case> {
    let gate = (
        prop_oneof![Just(Kind::Refunds), Just(Kind::Big), Just(Kind::All)],
        proptest::sample::subsequence(APPROVER_NAMES.to_vec(), 0..=2),
        1u32..=2,
        any::<bool>(),
    )
        .prop_map(|(kind, approvers, quorum, four_eyes)| GateSpec { kind, approvers, quorum, four_eyes });
    (
        proptest::sample::subsequence(vec!["alice", "bob", "carol"], 1..=2),
        proptest::collection::vec(gate, 1..=3),
        prop_oneof![Just(5u32), Just(150u32)],
        proptest::collection::vec((proptest::sample::select(PEOPLE.to_vec()), proptest::bool::weighted(0.8)), 1..=4),
    )
        .prop_map(|(finance, gates, amount, steps)| Case { finance, gates, amount, steps })
}

fn toml(case: &Case) -> String {
    let members: Vec<String> = case.finance.iter().map(|m| format!("{m:?}")).collect();
    let mut toml = format!(
        "[[groups]]\nname = \"finance\"\nmembers = [{}]\n\n[[agents]]\nname = \"support\"\n\
         tools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n",
        members.join(", ")
    );
    for (i, gate) in case.gates.iter().enumerate() {
        let kind = match gate.kind {
            Kind::Refunds => "kind = \"tools\"\ntools = [\"process_refund\"]",
            Kind::Big => "kind = \"rule\"\nrule = \"args.amount > 100\"",
            Kind::All => "kind = \"all\"",
        };
        let approvers: Vec<String> = gate.approvers.iter().map(|a| format!("{a:?}")).collect();
        toml.push_str(&format!(
            "[[agents.gates]]\nname = \"g{i}\"\n{kind}\ntimeout_secs = 600\nquorum = {}\nseparate_requester = {}\n",
            gate.quorum, gate.four_eyes
        ));
        if !approvers.is_empty() {
            toml.push_str(&format!("approvers = [{}]\n", approvers.join(", ")));
        }
    }
    toml
}

/// The reference model: docs/security.md, read as a specification.
struct Model {
    /// Each matching gate's people (`None`: no approvers named: whoever may decide) and quorum.
    shares: Vec<(Option<BTreeSet<&'static str>>, u32)>,
    four_eyes: bool,
    approved: Vec<&'static str>,
    state: State,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// No gate matched: the call ran without asking anyone.
    RanUnasked,
    Pending,
    Approved,
    Rejected,
}

impl Model {
    fn new(case: &Case) -> Self {
        let matches = |kind: Kind| match kind {
            Kind::Refunds | Kind::All => true,
            Kind::Big => case.amount > 100,
        };
        let people = |name: &str| -> BTreeSet<&'static str> {
            match name {
                "user:bob" => ["bob"].into(),
                "user:alice" => ["alice"].into(),
                "group:finance" => case.finance.iter().copied().filter(|m| PEOPLE.contains(m)).collect(),
                _ => ["root"].into(),
            }
        };
        let shares: Vec<_> = case
            .gates
            .iter()
            .filter(|g| matches(g.kind))
            .map(|g| {
                let named = (!g.approvers.is_empty()).then(|| {
                    let set: BTreeSet<&str> = g.approvers.iter().flat_map(|a| people(a)).collect();
                    // Names that stand for no one: the admins decide rather than nobody.
                    if set.is_empty() { ["root"].into() } else { set }
                });
                (named, g.quorum)
            })
            .collect();
        let four_eyes = case.gates.iter().any(|g| matches(g.kind) && g.four_eyes);
        let state = if shares.is_empty() { State::RanUnasked } else { State::Pending };
        Self { shares, four_eyes, approved: Vec::new(), state }
    }

    /// Who may decide at all: the union of the gates' approvers, or, when no gate names any,
    /// whoever sees the call (its owner and the admins).
    fn may_decide(&self, who: &str) -> bool {
        let named: Vec<&BTreeSet<&str>> = self.shares.iter().filter_map(|(p, _)| p.as_ref()).collect();
        match named.is_empty() {
            true => who == "alice" || who == "root",
            false => named.iter().any(|p| p.contains(who)),
        }
    }

    fn counted(share: &(Option<BTreeSet<&str>>, u32), approved: &[&str]) -> u32 {
        approved.iter().filter(|a| share.0.as_ref().is_none_or(|p| p.contains(**a))).count() as u32
    }

    fn met(&self) -> bool {
        let most = self.shares.iter().map(|s| s.1).max().unwrap_or(1);
        self.approved.len() as u32 >= most && self.shares.iter().all(|s| Self::counted(s, &self.approved) >= s.1)
    }

    /// Applies a decision; whether the server must accept it.
    fn decide(&mut self, who: &'static str, approve: bool) -> bool {
        if self.state != State::Pending || !self.may_decide(who) {
            return false;
        }
        if !approve {
            self.state = State::Rejected;
            return true;
        }
        if (self.four_eyes && who == "alice") || self.approved.contains(&who) {
            return false;
        }
        // Several gates naming approvers: an approval must add to a share not yet met.
        let several = self.shares.len() > 1 && self.shares.iter().any(|s| s.0.is_some());
        // A gate without approvers and no quorum is no share of its own: whoever decides meets it.
        let shares: Vec<_> = self.shares.iter().filter(|s| !(several && s.0.is_none() && s.1 <= 1)).collect();
        if several && !shares.iter().any(|s| s.0.as_ref().is_none_or(|p| p.contains(who)) && Self::counted(s, &self.approved) < s.1) {
            return false;
        }
        self.approved.push(who);
        if self.met() {
            self.state = State::Approved;
        }
        true
    }

    fn ran(&self) -> bool {
        matches!(self.state, State::RanUnasked | State::Approved)
    }
}

async fn run(case: Case) -> Result<(), TestCaseError> {
    let app = spawn_app_with(Options { agents_toml: Some(toml(&case)), ..Default::default() }).await;
    let c = app.create_conversation().await;
    let task = app.say(&c, &format!("refund ${} on order 1001", case.amount)).await;
    let mut model = Model::new(&case);
    let approval = match model.state {
        State::RanUnasked => {
            app.wait_task(&task, TaskStatus::Completed).await;
            prop_assert_eq!(app.order(1001).await.refunded, f64::from(case.amount), "ran unasked: {:?}", case);
            return Ok(());
        }
        _ => {
            app.wait_task(&task, TaskStatus::InputRequired).await;
            let pending = app.pending_approvals_of(&task).await;
            prop_assert_eq!(pending.len(), 1);
            pending[0].clone()
        }
    };
    for (i, &(who, approve)) in case.steps.iter().enumerate() {
        let before = events(&app, &c).await;
        let action = if approve { "approve" } else { "reject" };
        let body = if approve { json!({}) } else { json!({ "reason": "no" }) };
        let (status, answer) = app.as_user(who).post_json(&format!("/api/approvals/{}/{action}", approval.id), body).await;
        let accepted = model.decide(who, approve);
        prop_assert_eq!((200..300).contains(&status), accepted, "step {} ({} {}s): {} {}", i, who, action, status, answer);
        if !accepted {
            prop_assert_eq!(events(&app, &c).await, before, "step {}: a refusal changed nothing", i);
        }
        if model.state != State::Pending {
            // Decided: the call runs or the model hears the refusal, and the turn ends.
            prop_assert!(settled(&app, &task).await, "step {}: the model says decided, the server's turn still waits", i);
        }
        let refunded = app.order(1001).await.refunded;
        prop_assert_eq!(refunded, if model.ran() { f64::from(case.amount) } else { 0.0 }, "step {}: ran iff the model says", i);
    }
    Ok(())
}

/// Whether the task ends within a few seconds.
async fn settled(app: &TestApp, task: &str) -> bool {
    for _ in 0..200 {
        if app.task_status(task).await == TaskStatus::Completed {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    false
}

async fn events(app: &TestApp, conversation: &str) -> usize {
    app.detail(conversation).await.events.len()
}

/// Runs `cases` generated cases from `seed` against a real server each.
fn check(cases: u32, seed: u64) {
    let config = Config { cases, failure_persistence: None, rng_seed: RngSeed::Fixed(seed), ..Config::default() };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&case(), |case| {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(run(case))
    });
    if let Err(failure) = result {
        panic!("the server disagrees with the model (seed {seed}): {failure}");
    }
}

#[test]
fn decisions_agree_with_the_reference_model() {
    let cases = std::env::var("COUNTERSIGN_MODEL_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(16);
    let seed = std::env::var("COUNTERSIGN_MODEL_SEED").ok().and_then(|n| n.parse().ok()).unwrap_or(60);
    check(cases, seed);
}
