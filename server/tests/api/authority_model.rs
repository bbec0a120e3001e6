//! A model-based test of who may decide a call and when it runs. A reference model, written from
//! docs/security.md ("The authority rules", "A call's requirement", "Grants") and not from the
//! engine's code, says for a generated policy — gates in random order, with approvers, groups,
//! quorum, four-eyes and `grantable` — and a generated sequence of steps which decisions are
//! accepted and which calls have run. The calls are one conversation's refunds, asked one after
//! another: the first on order 1001, the later ones on order 1004. Each case runs against a real server on the suite's database (SQLite, and PostgreSQL
//! in its second run); after every step the server must agree with the model: an accepted
//! decision where the model accepts one, a refusal that changed nothing where it refuses, and the
//! refund made exactly when the model says the call runs.
//!
//! The model knows nothing of doors: the rules are the same on every one. Each decision is put
//! through a door drawn at random among those its person can use ([`Door`]): the REST API, the
//! CLI (`countersign approvals approve|reject --server`), the card's no-JavaScript form
//! (`/forms/approvals/{id}`, a signed-in browser), a signed link issued to that person, a signed
//! Slack click, and, for those who see the conversation (its owner, the admins), Approve / Reject
//! All, the batch bar's form (`/forms/tasks/{id}`) and A2A, and for its owner AG-UI. Each door's
//! answer is read as taken or refused by [`knock_as`]. An approval may also give "always allow"
//! (REST `{"grant": {}}`); alice may answer "yes" or "no" in the chat (taken only when every
//! matching gate says `confirm = "chat"`), and ask for another refund once the call before is decided:
//! the model says whether a grant lets it through unasked. The other steps: bob delegating to alice,
//! root turning bob's account off and on again, root removing someone from `finance` (a group
//! made through the API in some cases, the file's in others, where the API refuses), a restart
//! of the server on the same database (nothing lost, nothing added), and the deadline passing
//! (moved into the past in the database, as the clock would; each gate approves or rejects on
//! time-out).
//!
//! In about a third of the cases the agent has a `plan` gate, at a random place among the
//! others, and alice asks for two refunds at once (orders 1001 and 1004): the decisions are on
//! the plan, and once it is approved the model says which steps run without asking (those the
//! plan's approver could have approved alone, docs/security.md "Grants") and how many are asked.
//!
//! In about a fifth of the cases the refund comes from alice's MCP client through the gateway
//! (2026-07-28, showing elicitations: [`McpClient`]) instead of a chat. The client answers its
//! elicitation when it was given a `requestState` (a door of its own, [`Door::Mcp`]: an answer
//! after someone else decided is told that outcome and changes nothing), and cancels its request
//! (`notifications/cancelled`): a call still waiting is stopped for good, a decided one is left
//! as it is. A2A and AG-UI are not drawn there (they reach conversations made through them), nor
//! a restart while the client holds a request open (that ends the request, and with it the call).
//!
//! Not drawn, and why: emailed links are the signed links above, delivered by SMTP (email.rs);
//! the console (`approvals watch`) needs a terminal and decides through the same REST calls as
//! the CLI.
//!
//! `./x test` runs `COUNTERSIGN_MODEL_CASES` cases (default 16) from a fixed seed;
//! `scripts/authority-model.sh` runs many more from a random seed and prints it. A failure
//! prints the shrunk case; it then becomes a named test below (`run_case`).

use std::collections::{BTreeSet, HashMap};

use domain::{ConversationId, TaskId, TaskStatus};
use proptest::{
    prelude::*,
    test_runner::{Config, RngSeed, TestCaseError, TestRunner},
};
use serde_json::{Value, json};

use countersign::bus::Bus;
use engine::clock::now_ms;
use engine::store::Store;

use crate::{
    authority_matrix::{self, Ask, Pending, knock, snapshot},
    helpers::{Options, PASSWORD, TestApp, client_with_token, database_url, spawn_restartable, test_client},
};

/// The people of the test server: alice owns the conversation, root is the admin.
const PEOPLE: [&str; 3] = ["alice", "bob", "root"];
const APPROVER_NAMES: [&str; 4] = ["user:bob", "user:alice", "group:finance", "role:admin"];

/// The Slack workspace of the test servers: its secrets' variables (set once, [`slack_secrets`])
/// and its signing secret. No gate notifies Slack, so nothing is posted (its API is never called);
/// a click is what Slack would send from a posted message's buttons.
const SLACK_TOKEN_ENV: &str = "CS_MODEL_SLACK_TOKEN";
const SLACK_SECRET_ENV: &str = "CS_MODEL_SLACK_SECRET";
const SLACK_SECRET: &str = "model-slack-signing-secret";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// `kind = "tools"`, process_refund.
    Refunds,
    /// `kind = "rule"`, `args.amount > 100`.
    Big,
    /// `kind = "all"`.
    All,
    /// `kind = "plan"`: the agent's plans (`propose_plan`), in the cases that make one.
    Plan,
}

impl Kind {
    /// Whether a gate of this kind stops a refund of `amount` (`Some`) or the plan (`None`).
    /// `args.amount > 100` cannot be evaluated on a plan, which has no amount: a rule that fails
    /// matches (docs/config.md, fail-closed).
    fn stops(self, refund: Option<u32>) -> bool {
        match (self, refund) {
            (Kind::All, _) | (Kind::Big, None) => true,
            (Kind::Refunds, refund) => refund.is_some(),
            (Kind::Big, Some(amount)) => amount > 100,
            (Kind::Plan, refund) => refund.is_none(),
        }
    }
}

#[derive(Clone, Debug)]
struct GateSpec {
    kind: Kind,
    approvers: Vec<&'static str>,
    quorum: u32,
    four_eyes: bool,
    /// `grantable = …` when the gate says it (never `true` beside a quorum: the file is refused).
    grantable: Option<bool>,
    /// `confirm = "chat"`: asked in the chat (never with approvers, a quorum or four-eyes: the
    /// file is refused).
    in_chat: bool,
    /// `timeout_action = "approve"`, else `"reject"`.
    approves_on_timeout: bool,
}

impl GateSpec {
    /// A gate of this kind asked of one of `approvers` (anyone who sees the call if none), with
    /// no other rule: the named cases start from it.
    fn one_person(kind: Kind, approvers: Vec<&'static str>) -> Self {
        GateSpec { kind, approvers, quorum: 1, four_eyes: false, grantable: None, in_chat: false, approves_on_timeout: false }
    }

    /// Whether "always allow" may be given under the gate: what it says, else only when it asks
    /// nothing of each call on its own (no approvers, quorum or four-eyes).
    fn grantable(&self) -> bool {
        self.grantable.unwrap_or(self.approvers.is_empty() && self.quorum <= 1 && !self.four_eyes)
    }
}

/// Where a person's decision is put. The rules are the same on every door; what differs is who
/// can reach the call through it ([`Door::reaches`]) and how it says yes or no ([`knock_as`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Door {
    /// `POST /api/approvals/{id}/approve|reject` with the person's token.
    Rest,
    /// `countersign approvals approve|reject ID --server --token`.
    Cli,
    /// The card's form without JavaScript, `POST /forms/approvals/{id}`, from a browser signed in
    /// with the password.
    Form,
    /// The person's own signed links (`POST /api/approvals/{id}/links`), the button posted
    /// without a login.
    Link,
    /// A click on the Slack message's button, signed as Slack signs, by the person's Slack user.
    Slack,
    /// Approve All / Reject All of the task (it has one pending call).
    Bulk,
    /// The batch bar's form without JavaScript, `POST /forms/tasks/{id}`.
    FormAll,
    /// A2A `SendMessage` on the task with a `decision_type` data part.
    A2a,
    /// An AG-UI run on the thread that resumes the call's interrupt.
    AgUi,
    /// The MCP client that made the call (alice's, in the cases where the call comes through the
    /// gateway) sends it again with the `requestState` it was answered with and the person's
    /// answer to the elicitation. Only while the client holds such a state.
    Mcp,
}

impl Door {
    const ALL: [Door; 9] = [Door::Rest, Door::Cli, Door::Form, Door::Link, Door::Slack, Door::Bulk, Door::FormAll, Door::A2a, Door::AgUi];
    /// For a call an MCP client made: A2A and AG-UI reach conversations made through them, and
    /// the gateway's conversation is its client's; the client itself answers instead.
    const FOR_MCP: [Door; 8] = [Door::Rest, Door::Cli, Door::Form, Door::Link, Door::Slack, Door::Bulk, Door::FormAll, Door::Mcp];

    /// Whether `who` reaches the call through this door at all. Approve / Reject All, the batch
    /// bar and A2A act on the task, which only those who see the conversation see (its owner and
    /// the admins: an approver sees the approval, not the chat), and an AG-UI thread is its
    /// owner's alone (server/src/api/access.rs: a conversation belongs to one person on every
    /// door). Any other refusal is the rules', which the model says.
    fn reaches(self, who: &str) -> bool {
        match self {
            Door::Rest | Door::Cli | Door::Form | Door::Link | Door::Slack => true,
            Door::Bulk | Door::FormAll | Door::A2a => who == "alice" || who == "root",
            Door::AgUi | Door::Mcp => who == "alice",
        }
    }

    /// The matrix's own driver of this door (authority_matrix.rs), if it has one.
    fn in_matrix(self) -> Option<authority_matrix::Door> {
        Some(match self {
            Door::Rest => authority_matrix::Door::Rest,
            Door::Cli => authority_matrix::Door::Cli,
            Door::Link => authority_matrix::Door::Link,
            Door::Bulk => authority_matrix::Door::Bulk,
            Door::A2a => authority_matrix::Door::A2a,
            Door::AgUi => authority_matrix::Door::AgUi,
            Door::Form | Door::FormAll | Door::Slack | Door::Mcp => return None,
        })
    }
}

#[derive(Clone, Debug)]
enum Step {
    /// This person approves (true) or rejects (false) the call, through this door.
    Decide(&'static str, bool, Door),
    /// bob lets alice decide in his place.
    Delegate,
    /// This person approves the call with "always allow" (`{"grant": {}}`, REST).
    Grant(&'static str),
    /// alice answers in the chat, "yes" (true) or "no", while the call waits.
    Chat(bool),
    /// alice asks for another refund, of this amount, on order 1004, once the call before is
    /// decided: asked, or let through by a grant.
    Again(u32),
    /// root turns bob's account off.
    DisableBob,
    /// root turns bob's account on again; bob signs in again and makes a token (his ended).
    EnableBob,
    /// root takes this person out of `finance` (`PUT /api/groups/finance`).
    RemoveFromFinance(&'static str),
    /// The server stops as on SIGTERM and another starts on the same database.
    Restart,
    /// The pending approval's deadline passes (it is moved into the past in the database, as a
    /// clock would): the sweeper applies its timeout action.
    TimeOut,
    /// The MCP client that made the call sends `notifications/cancelled` for its request.
    Cancel,
}

#[derive(Clone, Debug)]
struct Case {
    /// Members of the group `finance` (`carol` has no account: she stands for no one).
    finance: Vec<&'static str>,
    /// `finance` is made through the API (`POST /api/groups`, its members with an account) rather
    /// than declared in the configuration file.
    finance_in_db: bool,
    gates: Vec<GateSpec>,
    amount: u32,
    /// With a `plan` gate: alice asks for two refunds at once, `amount` on order 1001 and this on
    /// order 1004, which the agent proposes as one plan.
    plan: Option<u32>,
    /// The call comes from alice's MCP client through the gateway (a 2026-07-28 client that shows
    /// elicitations), not from a chat.
    mcp: bool,
    steps: Vec<Step>,
}

/// A gate. Beside a plan gate (`plan`) each gate asks one person, so that the plan's approval
/// is one person's, and none asks in the chat.
fn gate(plan: bool) -> impl Strategy<Value = GateSpec> {
    (
        prop_oneof![Just(Kind::Refunds), Just(Kind::Big), Just(Kind::All)],
        proptest::sample::subsequence(APPROVER_NAMES.to_vec(), 0..=2),
        prop_oneof![3 => Just(1u32), 1 => Just(2u32)],
        any::<bool>(),
        prop_oneof![1 => Just(None), 2 => Just(Some(true)), 1 => Just(Some(false))],
        proptest::bool::weighted(0.3),
        proptest::bool::weighted(0.3),
    )
        .prop_map(move |(kind, approvers, quorum, four_eyes, grantable, in_chat, approves_on_timeout)| {
            let quorum = if plan { 1 } else { quorum };
            let in_chat = in_chat && !plan;
            let (approvers, quorum, four_eyes) = if in_chat { (Vec::new(), 1, false) } else { (approvers, quorum, four_eyes) };
            let grantable = if quorum > 1 && grantable == Some(true) { None } else { grantable };
            GateSpec { kind, approvers, quorum, four_eyes, grantable, in_chat, approves_on_timeout }
        })
}

fn case() -> impl Strategy<Value = Case> {
    let decide = |mcp: bool| {
        let any_door = (proptest::sample::select(PEOPLE.to_vec()), proptest::bool::weighted(0.8)).prop_flat_map(move |(who, yes)| {
            let doors = if mcp { Door::FOR_MCP.to_vec() } else { Door::ALL.to_vec() };
            let doors: Vec<Door> = doors.into_iter().filter(|d| d.reaches(who)).collect();
            proptest::sample::select(doors).prop_map(move |door| Step::Decide(who, yes, door))
        });
        // The MCP client answering its elicitation, often where there is one.
        let client = proptest::bool::weighted(0.8).prop_map(|yes| Step::Decide("alice", yes, Door::Mcp));
        match mcp {
            true => prop_oneof![3 => any_door, 2 => client].boxed(),
            false => any_door.boxed(),
        }
    };
    let amount = || prop_oneof![Just(5u32), Just(150u32)];
    // A plan: one `plan` gate (at a random place among the others) and a second refund.
    let plan = proptest::option::weighted(0.3, (amount(), any::<proptest::sample::Index>(), gate(true)));
    (proptest::sample::subsequence(vec!["alice", "bob", "carol"], 1..=2), any::<bool>(), amount(), plan, proptest::bool::weighted(0.3))
        .prop_flat_map(move |(finance, finance_in_db, first, plan, mcp)| {
            let planned = plan.is_some();
            // A call through the MCP gateway is never asked in a chat (it has none).
            let mcp = mcp && !planned;
            let gates = proptest::collection::vec(gate(planned), 1..=3)
                .prop_map(move |gates| gates.into_iter().map(|g| GateSpec { in_chat: g.in_chat && !mcp, ..g }).collect::<Vec<_>>());
            // The steps of one kind of case: a chat's yes or no and the next refund; a plan's
            // conversation asks nothing after it; an MCP client cancels its request.
            let (weight, own) = match (planned, mcp) {
                (false, false) => (5, prop_oneof![2 => any::<bool>().prop_map(Step::Chat), 3 => amount().prop_map(Step::Again)].boxed()),
                (true, _) => (1, Just(Step::TimeOut).boxed()),
                (false, true) => (2, Just(Step::Cancel).boxed()),
            };
            let steps = proptest::collection::vec(
                prop_oneof![
                    8 => decide(mcp),
                    3 => proptest::sample::select(PEOPLE.to_vec()).prop_map(Step::Grant),
                    weight => own,
                    1 => Just(Step::Delegate),
                    1 => Just(Step::DisableBob),
                    1 => Just(Step::EnableBob),
                    1 => proptest::sample::select(vec!["alice", "bob"]).prop_map(Step::RemoveFromFinance),
                    1 => Just(Step::Restart),
                    1 => Just(Step::TimeOut),
                ],
                1..=8,
            );
            (Just((finance, finance_in_db, first, plan, mcp)), gates, steps)
        })
        .prop_map(|((finance, finance_in_db, amount, plan, mcp), mut gates, steps)| {
            let plan = plan.map(|(second, at, mut gate)| {
                gate.kind = Kind::Plan;
                gate.grantable = None;
                gates.insert(at.index(gates.len() + 1), gate);
                second
            });
            Case { finance, finance_in_db, gates, amount, plan, mcp, steps }
        })
}

fn toml(case: &Case) -> String {
    let mut toml = String::new();
    if !case.finance_in_db {
        let members: Vec<String> = case.finance.iter().map(|m| format!("{m:?}")).collect();
        toml.push_str(&format!("[[groups]]\nname = \"finance\"\nmembers = [{}]\n\n", members.join(", ")));
    }
    toml.push_str(&format!(
        "[slack]\napi_base_url = \"http://127.0.0.1:9/api\"\nbot_token_env = \"{SLACK_TOKEN_ENV}\"\n\
         signing_secret_env = \"{SLACK_SECRET_ENV}\"\nchannel = \"C1\"\n\
         [slack.users]\nU_ALICE = \"alice\"\nU_BOB = \"bob\"\nU_ROOT = \"root\"\n\n"
    ));
    toml.push_str("[[agents]]\nname = \"support\"\ntools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n");
    for (i, gate) in case.gates.iter().enumerate() {
        let kind = match gate.kind {
            Kind::Refunds => "kind = \"tools\"\ntools = [\"process_refund\"]",
            Kind::Big => "kind = \"rule\"\nrule = \"args.amount > 100\"",
            Kind::All => "kind = \"all\"",
            Kind::Plan => "kind = \"plan\"",
        };
        let approvers: Vec<String> = gate.approvers.iter().map(|a| format!("{a:?}")).collect();
        toml.push_str(&format!(
            "[[agents.gates]]\nname = \"g{i}\"\n{kind}\ntimeout_secs = 600\ntimeout_action = \"{}\"\nquorum = {}\nseparate_requester = {}\n",
            if gate.approves_on_timeout { "approve" } else { "reject" },
            gate.quorum,
            gate.four_eyes
        ));
        if !approvers.is_empty() {
            toml.push_str(&format!("approvers = [{}]\n", approvers.join(", ")));
        }
        if let Some(grantable) = gate.grantable {
            toml.push_str(&format!("grantable = {grantable}\n"));
        }
        if gate.in_chat {
            toml.push_str("confirm = \"chat\"\n");
        }
    }
    toml
}

/// The reference model: docs/security.md, read as a specification. It follows the calls of one
/// conversation, one at a time: the current call (its shares, approvals and state) and what stays
/// from one call to the next (people, groups, delegation, grants).
struct Model {
    gates: Vec<GateSpec>,
    /// Which gates stop the current call, in the file's order, and its amount.
    matching: Vec<usize>,
    amount: u32,
    /// The first call is a plan of two refunds, `amount` on order 1001 and this on order 1004.
    plan: Option<u32>,
    /// Once the plan is decided: what its steps refunded (on orders 1001 and 1004), and how
    /// many of them are asked on their own.
    steps_ran: (u32, u32),
    steps_asked: usize,
    /// What the calls before the current one refunded: on order 1001 (the first call), on order
    /// 1004 (the calls after it).
    refunded_before: (u32, u32),
    /// Calls asked so far, the current one included.
    calls: u32,
    /// The refunds a person rejected, as (order, amount): the same call asked again in the
    /// conversation is refused again without asking anyone.
    rejected: Vec<(u32, u32)>,
    /// The standing grants given so far: the gates of the call they were given on (a grant is
    /// given under their combination), and who gave it.
    grants: Vec<(Vec<usize>, &'static str)>,
    /// Each matching gate's approver names (`None`: it names none: whoever may decide) and its
    /// quorum.
    shares: Vec<(Option<Vec<&'static str>>, u32)>,
    /// Whom each share's names stand for, as the approval keeps them: resolved when the call is
    /// asked, and again when an account it names is turned off, when a group it names changes,
    /// and at start-up for the file's groups ("The authority rules"). Turning an account on again
    /// is none of these: the approval keeps whom it had.
    resolved: Vec<Option<BTreeSet<&'static str>>>,
    /// The members of `finance` now; `finance_in_db`: a group made through the API, which an
    /// account leaves when it is turned off (the file's group is changed in the file).
    finance: BTreeSet<&'static str>,
    finance_in_db: bool,
    four_eyes: bool,
    /// Whom each approval counts as (the person a delegate stood in for), and who acted.
    approved: Vec<&'static str>,
    acted: Vec<&'static str>,
    /// bob's delegation to alice is in force (ended when bob is turned off, and not back when he
    /// is turned on again: a new one must be made).
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
    /// Its client stopped waiting for it: it never runs.
    Cancelled,
}

impl Model {
    fn new(case: &Case) -> Self {
        // A group made through the API holds only accounts.
        let finance = case.finance.iter().copied().filter(|m| !case.finance_in_db || PEOPLE.contains(m)).collect();
        let mut model = Self {
            gates: case.gates.clone(),
            matching: Vec::new(),
            amount: 0,
            plan: case.plan,
            steps_ran: (0, 0),
            steps_asked: 0,
            refunded_before: (0, 0),
            calls: 0,
            rejected: Vec::new(),
            grants: Vec::new(),
            shares: Vec::new(),
            resolved: Vec::new(),
            finance,
            finance_in_db: case.finance_in_db,
            four_eyes: false,
            approved: Vec::new(),
            acted: Vec::new(),
            delegated: false,
            bob_off: false,
            state: State::Pending,
        };
        model.ask(case.amount);
        model
    }

    /// alice asks for a refund of `amount`: every gate that matches applies; none, or a grant
    /// that covers it ("Grants"), and it runs without asking anyone.
    fn ask(&mut self, amount: u32) {
        (self.refunded_before.0, self.refunded_before.1) = self.refunded();
        self.calls += 1;
        self.amount = amount;
        // The first call of a plan's case is the plan; its refunds are its steps.
        let refund = (self.calls > 1 || self.plan.is_none()).then_some(amount);
        self.matching = (0..self.gates.len()).filter(|&i| self.gates[i].kind.stops(refund)).collect();
        self.shares = self
            .matching
            .iter()
            .map(|&i| &self.gates[i])
            .map(|g| ((!g.approvers.is_empty()).then(|| g.approvers.clone()), g.quorum))
            .collect();
        self.four_eyes = self.matching.iter().any(|&i| self.gates[i].four_eyes);
        self.approved.clear();
        self.acted.clear();
        self.resolve_again();
        let refused_before = self.rejected.contains(&(self.order(), amount));
        self.state = match (self.shares.is_empty(), self.covered()) {
            (true, _) => State::RanUnasked,
            // A person rejected this exact call here before: refused again, before any grant.
            (false, _) if refused_before => State::Rejected,
            (false, true) => {
                COVERED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                State::RanUnasked
            }
            _ => State::Pending,
        };
    }

    /// alice's yes or no in the chat: a decision like any other of hers when every matching gate
    /// asks there; otherwise the call is asked on its card and the message, sent while the turn
    /// waits, is refused (409).
    fn chat(&mut self, yes: bool) -> bool {
        let in_chat = !self.matching.is_empty() && self.matching.iter().all(|&i| self.gates[i].in_chat);
        in_chat && self.decide("alice", yes)
    }

    /// The current call's order: 1001 for the first, 1004 for those after it.
    fn order(&self) -> u32 {
        if self.calls <= 1 { 1001 } else { 1004 }
    }

    /// Whether every matching gate may be granted.
    fn grantable(&self) -> bool {
        self.matching.iter().all(|&i| self.gates[i].grantable())
    }

    /// Whether a grant covers the current call: given on a call the same gates stopped, by someone
    /// who could approve this one alone now — on, an approver of every share that names any, not
    /// its requester under four-eyes (a grantable gate asks no quorum).
    fn covered(&self) -> bool {
        self.grantable()
            && self.grants.iter().any(|(gates, giver)| {
                *gates == self.matching
                    && !(self.bob_off && *giver == "bob")
                    && !(self.four_eyes && *giver == "alice")
                    && self.resolved.iter().all(|people| people.as_ref().is_none_or(|p| p.contains(giver)))
            })
    }

    /// "Always allow" with an approval: refused unless every matching gate may be granted and the
    /// person it counts as meets the whole requirement alone; otherwise the approval as any
    /// other, and then the grant.
    fn grant(&mut self, who: &'static str) -> bool {
        // A plan is approved one at a time.
        if self.state != State::Pending || (self.bob_off && who == "bob") || !self.grantable() || self.plan.is_some() {
            return false;
        }
        let Some(principal) = self.decides_as(who) else { return false };
        if !self.resolved.iter().all(|people| people.as_ref().is_none_or(|p| p.contains(principal))) {
            return false;
        }
        if !self.decide(who, true) {
            return false;
        }
        self.grants.push((self.matching.clone(), who));
        GRANTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        true
    }

    /// Whom approver names stand for now: those with an account that is on; names that stand for
    /// no one leave the decision to the admins rather than to nobody.
    fn stand_for(&self, names: &[&'static str]) -> BTreeSet<&'static str> {
        let on = |p: &&'static str| PEOPLE.contains(p) && !(self.bob_off && *p == "bob");
        let people: BTreeSet<&'static str> = names
            .iter()
            .flat_map(|name| match *name {
                "user:bob" => vec!["bob"],
                "user:alice" => vec!["alice"],
                "group:finance" => self.finance.iter().copied().collect(),
                _ => vec!["root"],
            })
            .filter(on)
            .collect();
        if people.is_empty() { ["root"].into() } else { people }
    }

    /// Resolves every share's names again, as they stand now.
    fn resolve_again(&mut self) {
        self.resolved = self.shares.iter().map(|(names, _)| names.as_ref().map(|n| self.stand_for(n))).collect();
    }

    fn names_finance(&self) -> bool {
        self.shares.iter().any(|(names, _)| names.as_ref().is_some_and(|n| n.contains(&"group:finance")))
    }

    /// Who may decide at all, as themselves: the union of the gates' approvers, or, when no gate
    /// names any, whoever sees the call (its owner and the admins).
    fn may_decide(&self, who: &str) -> bool {
        if self.bob_off && who == "bob" {
            return false;
        }
        let named: Vec<&BTreeSet<&str>> = self.resolved.iter().flatten().collect();
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

    /// How many of `approved` count toward share `i`.
    fn counted(&self, i: usize, approved: &[&str]) -> u32 {
        approved.iter().filter(|a| self.resolved[i].as_ref().is_none_or(|p| p.contains(**a))).count() as u32
    }

    /// Earlier approvals count only while their person may still decide (enabled, an approver)
    /// and, for one a delegate gave, while the delegation is in force.
    fn still(&self) -> Vec<&'static str> {
        self.approved
            .iter()
            .zip(&self.acted)
            .filter(|&(&principal, &by)| self.may_decide(principal) && (principal == by || self.delegated))
            .map(|(&principal, _)| principal)
            .collect()
    }

    fn met(&self, approved: &[&'static str]) -> bool {
        let most = self.shares.iter().map(|s| s.1).max().unwrap_or(1);
        approved.len() as u32 >= most && (0..self.shares.len()).all(|i| self.counted(i, approved) >= self.shares[i].1)
    }

    /// Applies a decision; whether the server must accept it.
    fn decide(&mut self, who: &'static str, approve: bool) -> bool {
        if self.state != State::Pending || (self.bob_off && who == "bob") {
            return false;
        }
        let Some(principal) = self.decides_as(who) else { return false };
        if !approve {
            self.state = State::Rejected;
            self.rejected.push((self.order(), self.amount));
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
        let adds = |i: usize| {
            let (names, quorum) = &self.shares[i];
            // A gate without approvers and no quorum is no share of its own: whoever decides meets it.
            !(names.is_none() && *quorum <= 1)
                && self.resolved[i].as_ref().is_none_or(|p| p.contains(principal))
                && self.counted(i, &still) < *quorum
        };
        if several && !(0..self.shares.len()).any(adds) {
            return false;
        }
        self.approved.push(principal);
        self.acted.push(who);
        let mut now = still;
        now.push(principal);
        if self.met(&now) {
            self.state = State::Approved;
            self.release_steps(Some(who));
        }
        true
    }

    /// The deadline passed: the call runs if every matching gate approves on time-out, and is
    /// otherwise rejected (the only two actions drawn); a call that expired unanswered counts as
    /// rejected when asked again.
    fn time_out(&mut self) {
        TIMED_OUT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if self.matching.iter().all(|&i| self.gates[i].approves_on_timeout) {
            self.state = State::Approved;
            self.release_steps(None);
        } else {
            self.state = State::Rejected;
            self.rejected.push((self.order(), self.amount));
        }
    }

    /// The client that made the call cancels its request: a call still waiting is stopped for
    /// good; a decided one is left as it is.
    fn cancel(&mut self) -> bool {
        let waiting = self.state == State::Pending;
        if waiting {
            self.state = State::Cancelled;
            CANCELLED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        waiting
    }

    /// An approved plan's steps, released at once: a step no gate stops runs; one that a gate
    /// stops runs only when the person who approved the plan (`giver`; none when a timeout
    /// approved it) could have approved that step alone now ("Grants": every matching gate may
    /// be granted, the giver is on, one of every gate's approvers — or, when no gate names any,
    /// one who sees the call —, not its requester under four-eyes); any other step is asked.
    fn release_steps(&mut self, giver: Option<&'static str>) {
        let Some(second) = self.plan else { return };
        let (first, second) = (self.step_runs(self.amount, giver), self.step_runs(second, giver));
        PLANS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let gated = |amount: u32| self.gates.iter().any(|g| g.kind.stops(Some(amount)));
        let covered = usize::from(first && gated(self.amount)) + usize::from(second && gated(self.plan.unwrap_or(0)));
        STEPS_COVERED.fetch_add(covered, std::sync::atomic::Ordering::Relaxed);
        self.steps_asked = usize::from(!first) + usize::from(!second);
        self.steps_ran = (if first { self.amount } else { 0 }, if second { self.plan.unwrap_or(0) } else { 0 });
    }

    fn step_runs(&self, amount: u32, giver: Option<&'static str>) -> bool {
        let gates: Vec<&GateSpec> = self.gates.iter().filter(|g| g.kind.stops(Some(amount))).collect();
        let Some(giver) = giver else { return gates.is_empty() };
        let named: Vec<&GateSpec> = gates.iter().copied().filter(|g| !g.approvers.is_empty()).collect();
        gates.is_empty()
            || (gates.iter().all(|g| g.grantable() && g.quorum <= 1)
                && !(self.bob_off && giver == "bob")
                && !(giver == "alice" && gates.iter().any(|g| g.four_eyes))
                && match named.is_empty() {
                    true => giver == "alice" || giver == "root",
                    false => named.iter().all(|g| self.stand_for(&g.approvers).contains(giver)),
                })
    }

    /// Turned off: bob leaves the groups made through the API, his delegations end, and the
    /// pending approval is resolved again if it named him (to the admins if no one is left).
    fn disable_bob(&mut self) {
        let named = self.resolved.iter().flatten().any(|p| p.contains("bob"));
        let left = self.finance_in_db && self.finance.remove("bob") && self.names_finance();
        self.bob_off = true;
        self.delegated = false;
        if self.state == State::Pending && (named || left) {
            self.resolve_again();
        }
    }

    /// Turned on again: bob signs in and decides again where he is an approver; the groups made
    /// through the API he left, his ended delegations and the pending approval's resolution stay
    /// as they are (docs/security.md says of turning an account on again nothing more).
    fn enable_bob(&mut self) {
        self.bob_off = false;
    }

    /// Whether the API changes `finance` (a group made through it; the file's is changed in the
    /// file, 409); the pending approval, if it names the group, is decided by its new members.
    fn remove_from_finance(&mut self, person: &str) -> bool {
        if !self.finance_in_db {
            return false;
        }
        self.finance.remove(person);
        if self.state == State::Pending && self.names_finance() {
            self.resolve_again();
        }
        true
    }

    /// A restart loses nothing; the file's groups are resolved again for the pending approvals
    /// that name them.
    fn restart(&mut self) {
        if !self.finance_in_db && self.state == State::Pending && self.names_finance() {
            self.resolve_again();
        }
    }

    fn ran(&self) -> bool {
        matches!(self.state, State::RanUnasked | State::Approved)
    }

    /// What orders 1001 and 1004 must show as refunded now.
    fn refunded(&self) -> (u32, u32) {
        if self.plan.is_some() {
            return self.steps_ran;
        }
        let now = if self.calls > 0 && self.ran() { self.amount } else { 0 };
        let (first, later) = self.refunded_before;
        match self.calls {
            0 => (first, later),
            1 => (first + now, later),
            _ => (first, later + now),
        }
    }
}

/// What each person decides with: an API token (`read decide call`), and a browser signed in with
/// the password once they used a form.
struct People {
    tokens: HashMap<&'static str, String>,
    browsers: HashMap<&'static str, reqwest::Client>,
}

impl People {
    /// The app as `who`'s token sees it.
    fn app(&self, app: &TestApp, who: &str) -> TestApp {
        TestApp { client: client_with_token(&self.tokens[who]), ..app.clone() }
    }
}

/// A browser for `who`: a cookie jar, redirects not followed, signed in with the password when
/// `signs_in` (an account that is off cannot sign in: its browser has no session).
async fn browser(app: &TestApp, who: &str, signs_in: bool) -> reqwest::Client {
    let client = test_client().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap();
    if signs_in {
        let response =
            client.post(app.url("/api/session")).json(&json!({ "username": who, "password": PASSWORD })).send().await.expect("sign in");
        assert_eq!(response.status(), 200, "{who} signs in");
    }
    client
}

/// A new API token made by the signed-in `browser` (a token cannot make tokens).
async fn new_token(app: &TestApp, browser: &reqwest::Client) -> String {
    let response = browser
        .post(app.url("/api/tokens"))
        .header("sec-fetch-site", "same-origin")
        .json(&json!({ "name": "model" }))
        .send()
        .await
        .expect("create a token");
    assert_eq!(response.status(), 201, "a new token");
    let made: Value = response.json().await.expect("the new token");
    made["token"].as_str().expect("the token's secret").to_owned()
}

/// Puts `who`'s decision to `door` as that person: whether the door took it, and what it
/// answered. Each door's answer, read:
/// - REST, Approve / Reject All: a 2xx is taken; 403, 404, 409… refused. The CLI: exit status 0
///   taken, anything else (it prints the API's status) refused.
/// - A signed link: issuing the person's links (`POST /api/approvals/{id}/links`) refused is
///   refused (a link is made only for someone who may decide now); then the button's post: 200
///   ("Approved", "Rejected", "Your approval is counted") taken, every other page (403 "This
///   link no longer works", 409 "Not decided" or "Already decided", 410) refused.
/// - A2A: a JSON-RPC `result` taken, an `error` (in a 200 answer) refused.
/// - AG-UI: the run ends with `RUN_FINISHED` taken, with `RUN_ERROR` refused.
/// - The forms: 303 back to the page they came from (`/approvals`) taken; a page saying why
///   (4xx), or 303 to the login page (no session: an account turned off), refused.
/// - Slack: 200 either way; the reply that only the clicking person sees starts "Counted:",
///   "approved:" or "rejected:" when taken, anything else ("Not decided: …", "… may not decide
///   this approval …", "… has no Countersign account …") refused.
async fn knock_as(
    app: &TestApp,
    people: &mut People,
    bob_off: bool,
    who: &'static str,
    approve: bool,
    door: Door,
    at: &Pending,
) -> (bool, String) {
    if let Some(door) = door.in_matrix() {
        let ask = if approve { Ask::Approve { args: None, grant: false } } else { Ask::Reject };
        return match knock(app, &people.tokens[who], door, at, &ask).await {
            Ok(()) => (true, "taken".to_owned()),
            Err(why) => (false, why),
        };
    }
    match door {
        Door::Form | Door::FormAll => {
            let client = match people.browsers.get(who) {
                Some(client) => client.clone(),
                None => {
                    let client = browser(app, who, !(bob_off && who == "bob")).await;
                    people.browsers.insert(who, client.clone());
                    client
                }
            };
            let path = match door {
                Door::Form => format!("/forms/approvals/{}", at.approval),
                _ => format!("/forms/tasks/{}", at.task),
            };
            let mut form = vec![("decision", if approve { "approve" } else { "reject" }), ("back", "/approvals")];
            if !approve {
                form.push(("reason", "no"));
            }
            let response =
                client.post(app.url(&path)).header("sec-fetch-site", "same-origin").form(&form).send().await.expect("a form's post");
            let status = response.status().as_u16();
            let location = response.headers().get(reqwest::header::LOCATION).and_then(|l| l.to_str().ok()).unwrap_or_default().to_owned();
            let page = response.text().await.unwrap_or_default();
            (status == 303 && location == "/approvals", format!("{status} {location} {page}"))
        }
        _ => slack_click(app, who, approve, at.approval.as_str()).await,
    }
}

/// A click on the Slack message's Approve or Reject button by `who`'s Slack user, signed as Slack
/// signs (`v0:` + timestamp + body, HMAC-SHA256 with the signing secret).
async fn slack_click(app: &TestApp, who: &str, approve: bool, approval: &str) -> (bool, String) {
    use hmac::{Hmac, Mac};
    let action = if approve { "approve" } else { "reject" };
    let user = format!("U_{}", who.to_uppercase());
    let payload = json!({ "type": "block_actions", "user": { "id": user }, "actions": [{ "action_id": action, "value": approval }] });
    let body = serde_urlencoded::to_string([("payload", payload.to_string())]).unwrap();
    let ts = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(SLACK_SECRET.as_bytes()).unwrap();
    mac.update(format!("v0:{ts}:{body}").as_bytes());
    let signature = format!("v0={}", hex::encode(mac.finalize().into_bytes()));
    let response = test_client()
        .build()
        .unwrap()
        .post(app.url("/slack/interactions"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("x-slack-request-timestamp", ts.to_string())
        .header("x-slack-signature", signature)
        .body(body)
        .send()
        .await
        .expect("a Slack click");
    let status = response.status().as_u16();
    let reply: Value = response.json().await.unwrap_or(Value::Null);
    let text = reply["text"].as_str().unwrap_or_default();
    let taken = status == 200 && ["Counted: ", "approved: ", "rejected: "].iter().any(|p| text.starts_with(p));
    (taken, format!("{status} {text}"))
}

fn ok(status: u16) -> bool {
    (200..300).contains(&status)
}

async fn run(case: Case) -> Result<(), TestCaseError> {
    let options = Options { agents_toml: Some(toml(&case)), decisions_per_minute: Some(10_000), ..Default::default() };
    let mut server = spawn_restartable(options).await;
    let app = server.app.clone();
    if case.finance_in_db {
        let members: Vec<&str> = case.finance.iter().copied().filter(|m| PEOPLE.contains(m)).collect();
        let (status, body) = app.as_user("root").post_json("/api/groups", json!({ "name": "finance", "members": members })).await;
        prop_assert_eq!(status, 201, "the group finance, made through the API: {}", body);
    }
    let mut model = Model::new(&case);
    let mut client = McpClient { amount: case.amount, open: None, state: None };
    let (c, mut task) = match case.mcp {
        true => client.call(&app).await,
        false => {
            let c = app.create_conversation().await;
            let asks = match case.plan {
                Some(second) => format!("refund ${} on order 1001 and refund ${second} on order 1004", case.amount),
                None => format!("refund ${} on order 1001", case.amount),
            };
            let task = app.say(&c, &asks).await;
            (c, task)
        }
    };
    // The pending call the steps decide (the last one asked, if any was).
    let mut at = asked(&app, &c, &task, &model).await?;
    // Once the call waits, the client is answered "input required" at once when it may ask its
    // person; otherwise its request stays open.
    client.settle(std::time::Duration::from_millis(500)).await;
    let mut people = People { tokens: PEOPLE.iter().map(|p| (*p, app.tokens[*p].clone())).collect(), browsers: HashMap::new() };
    for (i, step) in case.steps.iter().enumerate() {
        STEPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let app = server.app.clone();
        let root = app.as_user("root");
        let before = events(&app, &c).await;
        client.look().await;
        let (taken, answer, accepted) = match *step {
            Step::Decide(..) | Step::Grant(_) if at.is_none() => continue,
            // The client answers only with a state it was given (and holds no request meanwhile).
            Step::Decide(_, _, Door::Mcp) if client.state.is_none() => continue,
            Step::Decide(who, approve, Door::Mcp) => {
                // An answer that comes after someone else decided is told that decision's outcome:
                // taken only if it changed the approval.
                let approval = &at.as_ref().unwrap().approval;
                let before = snapshot(&app, approval).await;
                let (answered, answer) = client.answer(&app, &people.tokens[who], approve).await;
                let taken = answered && snapshot(&app, approval).await != before;
                MCP_ANSWERS.fetch_add(usize::from(taken), std::sync::atomic::Ordering::Relaxed);
                (taken, answer, model.decide(who, approve))
            }
            Step::Decide(who, approve, door) => {
                let at = at.as_ref().unwrap();
                // A link is made only for someone who could approve with it (links::issue checks
                // four-eyes): the requester under four-eyes gets none, not even to reject, so
                // that rejection, which the rules allow, goes through REST.
                let door = if door == Door::Link && who == "alice" && !approve && model.four_eyes { Door::Rest } else { door };
                let (taken, answer) = knock_as(&app, &mut people, model.bob_off, who, approve, door, at).await;
                (taken, answer, model.decide(who, approve))
            }
            Step::Grant(who) => {
                let grant = Ask::Approve { args: None, grant: true };
                let at = at.as_ref().unwrap();
                let answer = knock(&app, &people.tokens[who], authority_matrix::Door::Rest, at, &grant).await;
                (answer.is_ok(), format!("{answer:?}"), model.grant(who))
            }
            Step::Chat(_) if model.state != State::Pending => continue,
            Step::Chat(yes) => {
                let text = if yes { "yes" } else { "no" };
                let (status, answer) =
                    people.app(&app, "alice").post_json(&format!("/api/conversations/{c}/messages"), json!({ "text": text })).await;
                (status == 202, format!("{status} {answer}"), model.chat(yes))
            }
            Step::Again(_) if model.state == State::Pending || model.plan.is_some() => continue,
            Step::Again(amount) => {
                model.ask(amount);
                task = app.say(&c, &format!("refund ${amount} on order 1004")).await;
                if let Some(pending) = asked(&app, &c, &task, &model).await? {
                    at = Some(pending);
                }
                (true, "asked".to_owned(), true)
            }
            Step::Delegate if model.delegated => continue,
            Step::Delegate => {
                let ends_at = engine::clock::rfc3339(now_ms() + 3_600_000);
                let bob = people.app(&app, "bob");
                let (status, answer) = bob.post_json("/api/delegations", json!({ "to": "alice", "ends_at": ends_at })).await;
                model.delegated = !model.bob_off;
                (ok(status), format!("{status} {answer}"), !model.bob_off)
            }
            Step::DisableBob if model.bob_off => continue,
            Step::DisableBob => {
                let (status, answer) = root.post_json("/api/users/bob/disable", json!({})).await;
                model.disable_bob();
                (ok(status), format!("{status} {answer}"), true)
            }
            Step::EnableBob if !model.bob_off => continue,
            Step::EnableBob => {
                let (status, answer) = root.post_json("/api/users/bob/enable", json!({})).await;
                model.enable_bob();
                if ok(status) {
                    // His tokens were revoked and his sessions ended when he was turned off.
                    let bob = browser(&app, "bob", true).await;
                    people.tokens.insert("bob", new_token(&app, &bob).await);
                    people.browsers.insert("bob", bob);
                }
                (ok(status), format!("{status} {answer}"), true)
            }
            Step::RemoveFromFinance(person) => {
                let members: Vec<&str> = model.finance.iter().copied().filter(|m| *m != person && PEOPLE.contains(m)).collect();
                let response =
                    root.client.put(app.url("/api/groups/finance")).json(&json!({ "members": members })).send().await.expect("PUT");
                let status = response.status().as_u16();
                let answer = response.text().await.unwrap_or_default();
                (ok(status), format!("{status} {answer}"), model.remove_from_finance(person))
            }
            // A restart ends the request the client holds open, and with it the call (its client
            // stopped waiting): not drawn while one is open.
            Step::Restart if client.holds() => continue,
            Step::Restart => {
                let kept = match &at {
                    Some(at) => Some(snapshot(&app, &at.approval).await),
                    None => None,
                };
                server = server.restart().await;
                model.restart();
                prop_assert_eq!(events(&server.app, &c).await, before, "step {}: the restart lost or added events", i);
                if let (Some(at), Some(kept)) = (&at, kept) {
                    prop_assert_eq!(snapshot(&server.app, &at.approval).await, kept, "step {}: the restart changed the approval", i);
                }
                (true, "restarted".to_owned(), true)
            }
            Step::Cancel => {
                let canceled = async |at: &Option<Pending>| match at {
                    Some(at) => snapshot(&app, &at.approval).await.0 == "canceled",
                    None => false,
                };
                let before = canceled(&at).await;
                let status = cancel_request(&app, &people.tokens["alice"]).await;
                let accepted = model.cancel();
                // A cancellation that stops the call does so before its 202.
                let stopped = !before && canceled(&at).await;
                (status == 202 && stopped, format!("{status}, the approval canceled by it: {stopped}"), accepted)
            }
            Step::TimeOut if model.state != State::Pending => continue,
            Step::TimeOut => {
                let approval = &at.as_ref().expect("a pending call has its approval").approval;
                let store = Store::connect(&database_url(app.data_dir.path()).await, Bus::default()).await.expect("the database");
                sqlx::query("UPDATE approvals SET deadline = $1 WHERE id = $2")
                    .bind(now_ms() - 1000)
                    .bind(approval.as_str())
                    .execute(store.testing().pool())
                    .await
                    .expect("the deadline moved");
                model.time_out();
                (true, "timed out".to_owned(), true)
            }
        };
        prop_assert_eq!(taken, accepted, "step {} ({:?}): {}", i, step, answer);
        // After a restart, the new server.
        let app = server.app.clone();
        if !accepted {
            prop_assert_eq!(events(&app, &c).await, before, "step {}: a refusal changed nothing", i);
        }
        if model.steps_asked > 0 {
            // An approved plan whose steps are asked: the turn waits on them.
            let asked = steps_asked(&app, &task).await;
            prop_assert_eq!(asked, model.steps_asked, "step {}: the plan's steps asked on their own", i);
            at = None;
        } else if model.state != State::Pending {
            // Decided: the call runs or the model hears the refusal, and the turn ends.
            prop_assert!(settled(&app, &task).await, "step {}: the model says decided, the server's turn still waits", i);
        }
        let refunded = (app.order(1001).await.refunded, app.order(1004).await.refunded);
        let (first, later) = model.refunded();
        prop_assert_eq!(refunded, (f64::from(first), f64::from(later)), "step {}: ran iff the model says", i);
    }
    Ok(())
}

/// alice's MCP client (2026-07-28, showing elicitations, with her token): the refund it calls,
/// the request it holds open while its call waits, and the `requestState` it was answered with
/// when it may ask its person.
struct McpClient {
    amount: u32,
    open: Option<tokio::task::JoinHandle<Value>>,
    state: Option<String>,
}

impl McpClient {
    /// The refund's request; `extra` params (its answer and state).
    fn request(&self, extra: Value) -> Value {
        let mut extra = extra;
        extra["arguments"] = json!({ "order_id": 1001, "amount": self.amount });
        authority_matrix::mcp_call(extra)
    }

    /// Calls the refund: the gateway's conversation (alice's only one) and the call's task.
    async fn call(&mut self, app: &TestApp) -> (ConversationId, TaskId) {
        let (app2, body) = (app.clone(), self.request(json!({})));
        let token = app.tokens["alice"].clone();
        self.open = Some(tokio::spawn(async move { authority_matrix::mcp(&app2, &token, body).await }));
        let c = crate::helpers::eventually("the MCP client's call to be recorded", || async {
            let (_, list) = app.get_json("/api/conversations").await;
            let c = ConversationId::from(list.as_array()?.first()?["id"].as_str()?.to_owned());
            (!app.detail(&c).await.view.tasks.is_empty()).then_some(c)
        })
        .await;
        let task = app.detail(&c).await.view.tasks.last().expect("the call's task").task_id.clone();
        (c, task)
    }

    /// Waits up to `within` for the open request's answer; keeps the state of an "input
    /// required" one. The answer, if it came.
    async fn settle(&mut self, within: std::time::Duration) -> Option<Value> {
        let open = self.open.as_mut()?;
        let answer = tokio::time::timeout(within, open).await.ok()?.expect("the MCP request's task");
        self.open = None;
        if answer["result"]["resultType"] == "input_required" {
            self.state = answer["result"]["requestState"].as_str().map(str::to_owned);
        }
        Some(answer)
    }

    /// Takes the open request's answer if it came meanwhile (a held call that came to wait for
    /// alice's decision is answered "input required" then).
    async fn look(&mut self) {
        if self.open.as_ref().is_some_and(|o| o.is_finished()) {
            self.settle(std::time::Duration::from_secs(1)).await;
        }
    }

    fn holds(&self) -> bool {
        self.open.as_ref().is_some_and(|o| !o.is_finished())
    }

    /// The person's answer, sent with the state: refused with a JSON-RPC error (the state kept);
    /// otherwise answered with the call's outcome, or held while it waits for more.
    async fn answer(&mut self, app: &TestApp, token: &str, approve: bool) -> (bool, String) {
        let state = self.state.clone().expect("a state to answer with");
        let body = self.request(json!({
            "requestState": state,
            "inputResponses": { "approval": { "action": "accept", "content": { "approve": approve } } },
        }));
        let (app, token) = (app.clone(), token.to_owned());
        self.open = Some(tokio::spawn(async move { authority_matrix::mcp(&app, &token, body).await }));
        self.state = None;
        // A refusal is answered at once; an answer taken waits for the call's outcome.
        match self.settle(std::time::Duration::from_millis(1500)).await {
            Some(answer) if answer.get("error").is_some() => {
                self.state = Some(state);
                (false, answer.to_string())
            }
            Some(answer) => (true, answer.to_string()),
            None => (true, "held until the call is decided".to_owned()),
        }
    }
}

/// `notifications/cancelled` for the client's request (id 1, as each of its requests), sent as
/// a 2026-07-28 client sends it; the gateway's status.
async fn cancel_request(app: &TestApp, token: &str) -> u16 {
    let body = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 1, "reason": "stopped" } });
    let response = client_with_token(token)
        .post(app.url("/mcp/support"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "notifications/cancelled")
        .json(&body)
        .send()
        .await
        .expect("the cancellation");
    response.status().as_u16()
}

/// Waits for the turn that asked for `task`'s call to stop, and checks it stopped as the model
/// says: on one pending approval (answered), or done, the call run without asking.
async fn asked(app: &TestApp, c: &str, task: &str, model: &Model) -> Result<Option<Pending>, TestCaseError> {
    let mut status = app.task_status(task).await;
    for _ in 0..400 {
        if matches!(status, TaskStatus::InputRequired | TaskStatus::Completed) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        status = app.task_status(task).await;
    }
    if model.state != State::Pending {
        prop_assert_eq!(status, TaskStatus::Completed, "the model says the call is not asked: it runs, or is refused again");
        return Ok(None);
    }
    prop_assert_eq!(status, TaskStatus::InputRequired, "the model says the call is asked");
    let pending = app.pending_approvals_of(task).await;
    prop_assert_eq!(pending.len(), 1);
    Ok(Some(Pending { conversation: c.into(), task: task.into(), approval: pending[0].id.clone(), request_state: None }))
}

/// How many calls of the task wait for a decision once its approved plan was released (the
/// plan's own approval decided, the turn waiting again), within a few seconds.
async fn steps_asked(app: &TestApp, task: &str) -> usize {
    for _ in 0..200 {
        let pending = app.pending_approvals_of(task).await;
        if app.task_status(task).await == TaskStatus::InputRequired
            && pending.iter().all(|a| a.tool != "propose_plan")
            && !pending.is_empty()
        {
            return pending.len();
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    app.pending_approvals_of(task).await.len()
}

/// Whether the task ends within a few seconds.
async fn settled(app: &TestApp, task: &str) -> bool {
    for _ in 0..200 {
        if app.task_status(task).await.is_final() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    false
}

async fn events(app: &TestApp, conversation: &str) -> usize {
    app.detail(conversation).await.events.len()
}

/// Steps run so far (shrinking included), and calls the model let through by a grant, said at
/// the end of a run.
static STEPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static COVERED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static GRANTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
/// Plans released (by a person or a timeout), their steps let through by the plan's approval,
/// and approvals that timed out.
static PLANS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static STEPS_COVERED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static TIMED_OUT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
/// Decisions an MCP client's answer to its elicitation carried, and calls its cancellation stopped.
static MCP_ANSWERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static CANCELLED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Sets the Slack workspace's secrets, once, before the first server starts (it reads them at
/// start-up).
fn slack_secrets() {
    static SET: std::sync::Once = std::sync::Once::new();
    // SAFETY: set once, to the same values every time, under names no other test uses, before this
    // test's first server starts (nextest runs each test in a process of its own).
    SET.call_once(|| unsafe {
        std::env::set_var(SLACK_TOKEN_ENV, "xoxb-model");
        std::env::set_var(SLACK_SECRET_ENV, SLACK_SECRET);
    });
}

/// One case against a real server, on a runtime of its own (a named test of a shrunk case calls
/// this).
fn run_case(case: Case) -> Result<(), TestCaseError> {
    slack_secrets();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(run(case))
}

/// Runs `cases` generated cases from `seed` against a real server each.
fn check(cases: u32, seed: u64) {
    let config = Config { cases, failure_persistence: None, rng_seed: RngSeed::Fixed(seed), ..Config::default() };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&case(), run_case);
    let steps = STEPS.load(std::sync::atomic::Ordering::Relaxed);
    if let Err(failure) = result {
        panic!("the server disagrees with the model (seed {seed}, after {steps} steps): {failure}");
    }
    let covered = COVERED.load(std::sync::atomic::Ordering::Relaxed);
    let granted = GRANTED.load(std::sync::atomic::Ordering::Relaxed);
    let plans = PLANS.load(std::sync::atomic::Ordering::Relaxed);
    let steps_covered = STEPS_COVERED.load(std::sync::atomic::Ordering::Relaxed);
    let timed_out = TIMED_OUT.load(std::sync::atomic::Ordering::Relaxed);
    let (answers, cancelled) =
        (MCP_ANSWERS.load(std::sync::atomic::Ordering::Relaxed), CANCELLED.load(std::sync::atomic::Ordering::Relaxed));
    println!(
        "authority model: {cases} cases, {steps} steps ({granted} grants given, {covered} calls let through by one; {plans} plans \
         released, {steps_covered} gated steps let through by the plan's approval; {timed_out} timeouts; {answers} MCP elicitation \
         answers taken, {cancelled} calls stopped by their client's cancellation), seed {seed}: the server agreed with the model"
    );
}

/// Found by the model: a refund rejected before and asked again is refused again without asking
/// (docs/security.md, "The authority rules"), whichever gate stops it.
#[test]
fn a_call_rejected_before_is_refused_again_without_asking() {
    let case = Case {
        finance: vec!["alice"],
        finance_in_db: false,
        gates: vec![GateSpec::one_person(Kind::All, Vec::new())],
        amount: 5,
        plan: None,
        mcp: false,
        steps: vec![Step::Decide("alice", false, Door::Rest), Step::Again(5), Step::Decide("alice", false, Door::Rest), Step::Again(5)],
    };
    run_case(case).unwrap();
}

#[test]
fn decisions_agree_with_the_reference_model() {
    let cases = std::env::var("COUNTERSIGN_MODEL_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(16);
    let seed = std::env::var("COUNTERSIGN_MODEL_SEED").ok().and_then(|n| n.parse().ok()).unwrap_or(60);
    check(cases, seed);
}

/// Found by the model: a plan approved by someone its gate names (bob) who does not see the
/// conversation lets none of its steps through where no gate names approvers: only alice and
/// the admins could have approved them alone, so they are asked.
#[test]
fn a_plan_approved_by_someone_who_cannot_see_its_steps_lets_none_of_them_through() {
    let case = Case {
        finance: vec!["alice"],
        finance_in_db: false,
        gates: vec![GateSpec::one_person(Kind::Plan, vec!["user:bob"]), GateSpec::one_person(Kind::Refunds, Vec::new())],
        amount: 5,
        plan: Some(150),
        mcp: false,
        steps: vec![Step::Decide("bob", true, Door::Rest)],
    };
    run_case(case).unwrap();
}
