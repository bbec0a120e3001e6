//! A model-based test of who may decide a call and when it runs. A reference model, written from
//! docs/security.md ("The authority rules", "A call's requirement") and not from the engine's
//! code, says for a generated policy — gates in random order, with approvers, groups, quorum and
//! four-eyes — and a generated sequence of decisions by different people, a delegation and an
//! account turned off, which decisions are accepted and whether the call has run. Each case runs against a real server on the suite's
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
enum Step {
    /// This person approves (true) or rejects (false) the call.
    Decide(&'static str, bool),
    /// bob lets alice decide in his place.
    Delegate,
    /// root turns bob's account off.
    DisableBob,
}

#[derive(Clone, Debug)]
struct Case {
    /// Members of the file's group `finance` (`carol` has no account: she stands for no one).
    finance: Vec<&'static str>,
    gates: Vec<GateSpec>,
    amount: u32,
    steps: Vec<Step>,
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
        proptest::collection::vec(
            prop_oneof![
                6 => (proptest::sample::select(PEOPLE.to_vec()), proptest::bool::weighted(0.8)).prop_map(|(who, yes)| Step::Decide(who, yes)),
                1 => Just(Step::Delegate),
                1 => Just(Step::DisableBob),
            ],
            1..=5,
        ),
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
    /// Each matching gate's people as named (`None`: no approvers named: whoever may decide), and
    /// its quorum. Who they stand for now is [`Model::people`].
    shares: Vec<(Option<BTreeSet<&'static str>>, u32)>,
    four_eyes: bool,
    /// Whom each approval counts as (the person a delegate stood in for), and who acted.
    approved: Vec<&'static str>,
    acted: Vec<&'static str>,
    delegated: bool,
    bob_off: bool,
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
            .map(|g| ((!g.approvers.is_empty()).then(|| g.approvers.iter().flat_map(|a| people(a)).collect()), g.quorum))
            .collect();
        let four_eyes = case.gates.iter().any(|g| matches(g.kind) && g.four_eyes);
        let state = if shares.is_empty() { State::RanUnasked } else { State::Pending };
        Self { shares, four_eyes, approved: Vec::new(), acted: Vec::new(), delegated: false, bob_off: false, state }
    }

    /// Whom a share's names stand for now: those with an account that is on; names that stand
    /// for no one leave the decision to the admins rather than to nobody.
    fn people(&self, named: &BTreeSet<&'static str>) -> BTreeSet<&'static str> {
        let on: BTreeSet<&str> = named.iter().copied().filter(|p| !(self.bob_off && *p == "bob")).collect();
        if on.is_empty() { ["root"].into() } else { on }
    }

    /// Who may decide at all, as themselves: the union of the gates' approvers, or, when no gate
    /// names any, whoever sees the call (its owner and the admins).
    fn may_decide(&self, who: &str) -> bool {
        if self.bob_off && who == "bob" {
            return false;
        }
        let named: Vec<BTreeSet<&str>> = self.shares.iter().filter_map(|(p, _)| p.as_ref()).map(|p| self.people(p)).collect();
        match named.is_empty() {
            true => who == "alice" || who == "root",
            false => named.iter().any(|p| p.contains(who)),
        }
    }

    /// Whom `who`'s decision counts as: themselves, else bob while his delegation to alice is in
    /// force and bob may decide.
    fn decides_as(&self, who: &'static str) -> Option<&'static str> {
        if self.may_decide(who) {
            Some(who)
        } else if who == "alice" && self.delegated && !self.bob_off && self.may_decide("bob") {
            Some("bob")
        } else {
            None
        }
    }

    fn counted(&self, share: &(Option<BTreeSet<&'static str>>, u32), approved: &[&str]) -> u32 {
        approved.iter().filter(|a| share.0.as_ref().is_none_or(|p| self.people(p).contains(**a))).count() as u32
    }

    /// Earlier approvals count only while their person may still decide (enabled, an approver).
    fn still(&self) -> Vec<&'static str> {
        self.approved.iter().copied().filter(|a| !(self.bob_off && *a == "bob") && self.may_decide(a)).collect()
    }

    fn met(&self, approved: &[&'static str]) -> bool {
        let most = self.shares.iter().map(|s| s.1).max().unwrap_or(1);
        approved.len() as u32 >= most && self.shares.iter().all(|s| self.counted(s, approved) >= s.1)
    }

    /// Applies a decision; whether the server must accept it.
    fn decide(&mut self, who: &'static str, approve: bool) -> bool {
        if self.state != State::Pending || (self.bob_off && who == "bob") {
            return false;
        }
        let Some(principal) = self.decides_as(who) else { return false };
        if !approve {
            self.state = State::Rejected;
            return true;
        }
        // Four-eyes: neither the requester nor anyone standing in for them approves.
        if self.four_eyes && (who == "alice" || principal == "alice") {
            return false;
        }
        // A person counts once, whoever they act as.
        if [who, principal].iter().any(|p| self.approved.contains(p) || self.acted.contains(p)) {
            return false;
        }
        let still = self.still();
        // Several gates naming approvers: an approval must add to a share not yet met.
        let several = self.shares.len() > 1 && self.shares.iter().any(|s| s.0.is_some());
        // A gate without approvers and no quorum is no share of its own: whoever decides meets it.
        let shares: Vec<_> = self.shares.iter().filter(|s| !(several && s.0.is_none() && s.1 <= 1)).collect();
        let adds = |s: &&(Option<BTreeSet<&'static str>>, u32)| {
            s.0.as_ref().is_none_or(|p| self.people(p).contains(principal)) && self.counted(s, &still) < s.1
        };
        if several && !shares.iter().any(adds) {
            return false;
        }
        self.approved.push(principal);
        self.acted.push(who);
        let mut now = still;
        now.push(principal);
        if self.met(&now) {
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
    for (i, step) in case.steps.iter().enumerate() {
        STEPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let before = events(&app, &c).await;
        let (status, answer, accepted) = match *step {
            Step::Decide(who, approve) => {
                let action = if approve { "approve" } else { "reject" };
                let body = if approve { json!({}) } else { json!({ "reason": "no" }) };
                let (status, answer) = app.as_user(who).post_json(&format!("/api/approvals/{}/{action}", approval.id), body).await;
                (status, answer, model.decide(who, approve))
            }
            Step::Delegate if model.delegated => continue,
            Step::Delegate => {
                let ends_at = countersign::store::time::rfc3339(countersign::store::time::now_ms() + 3_600_000);
                let (status, answer) = app.as_user("bob").post_json("/api/delegations", json!({ "to": "alice", "ends_at": ends_at })).await;
                model.delegated = !model.bob_off;
                (status, answer, !model.bob_off)
            }
            Step::DisableBob if model.bob_off => continue,
            Step::DisableBob => {
                let (status, answer) = app.as_user("root").post_json("/api/users/bob/disable", json!({})).await;
                (model.bob_off, model.delegated) = (true, false);
                (status, answer, true)
            }
        };
        prop_assert_eq!((200..300).contains(&status), accepted, "step {} ({:?}): {} {}", i, step, status, answer);
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

/// Steps run so far (shrinking included), said at the end of a run.
static STEPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Runs `cases` generated cases from `seed` against a real server each.
fn check(cases: u32, seed: u64) {
    let config = Config { cases, failure_persistence: None, rng_seed: RngSeed::Fixed(seed), ..Config::default() };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&case(), |case| {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(run(case))
    });
    let steps = STEPS.load(std::sync::atomic::Ordering::Relaxed);
    if let Err(failure) = result {
        panic!("the server disagrees with the model (seed {seed}, after {steps} steps): {failure}");
    }
    println!("authority model: {cases} cases, {steps} steps, seed {seed}: the server agreed with the model");
}

#[test]
fn decisions_agree_with_the_reference_model() {
    let cases = std::env::var("COUNTERSIGN_MODEL_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(16);
    let seed = std::env::var("COUNTERSIGN_MODEL_SEED").ok().and_then(|n| n.parse().ok()).unwrap_or(60);
    check(cases, seed);
}
