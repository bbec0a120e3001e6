//! What happens to a proposed call: what it requires — every gate that matches it, combined
//! ([`check`], [`Requirement`]) — and the verdict over everything known about the call
//! ([`classify`]). Pure: no I/O, no clock — the task driver gathers the facts, asks, and
//! records the verdict (`orchestrator/task_driver/model_step.rs`). How gates combine:
//! docs/security.md.

use domain::CallState;
use domain::GrantId;
use serde_json::{Value, json};

use domain::wire::{FieldProblem, Reversibility, RiskAssessment, Usage};

use crate::{
    agents::{Agent, Budget, BudgetScope, Gate, GateRule, Rule, TimeoutAction},
    tools::ToolSpec,
};

/// What a gate may look at.
#[derive(Clone, Copy)]
pub struct Call<'a> {
    pub tool: &'a ToolSpec,
    pub args: &'a Value,
    /// User name of the conversation's owner.
    pub user: &'a str,
    /// How sure the model is of the call, 0–1, when it says.
    pub confidence: Option<f64>,
    /// What the model has spent so far, including the step that proposed the call.
    pub spent: &'a Spent,
}

/// Model usage so far, in the task and in the whole conversation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Spent {
    pub task: Usage,
    pub conversation: Usage,
}

impl Spent {
    /// What the model spent in `history` (a conversation's events): in the whole conversation,
    /// and in `task`.
    pub fn of(history: &[domain::Event], task: &domain::TaskId) -> Self {
        let mut spent = Self::default();
        for event in history {
            if let domain::EventBody::ModelUsage { task_id, usage, .. } = &event.body {
                spent.conversation.add(usage);
                if task_id == task {
                    spent.task.add(usage);
                }
            }
        }
        spent
    }

    pub fn per(&self, scope: BudgetScope) -> &Usage {
        match scope {
            BudgetScope::Task => &self.task,
            BudgetScope::Conversation => &self.conversation,
        }
    }

    /// Whether `budget` is spent: more tokens or dollars than it allows.
    pub fn exceeds(&self, budget: &Budget) -> bool {
        let used = self.per(budget.per);
        budget.tokens.is_some_and(|limit| used.tokens() > limit)
            || budget.cost_usd.is_some_and(|limit| used.cost_usd.is_some_and(|cost| cost > limit))
    }
}

/// What the policy decided for one call.
pub struct Gating<'a> {
    /// What the call requires, if a gate stops it.
    pub requirement: Option<Requirement<'a>>,
    /// When no gate stops it: every shadow gate (`mode = "shadow"`) that would have, by name
    /// (the order of the gates in the file changes nothing).
    pub shadows: Vec<&'a Gate>,
    /// Enforcing gates' rules that could not be evaluated for this call.
    pub rule_errors: Vec<RuleError<'a>>,
}

/// An enforcing gate's rule that could not be evaluated for a call (a missing field, a type
/// error): the gate matches (fail-closed) unless its agent is `fail_open`.
#[derive(Clone, Debug)]
pub struct RuleError<'a> {
    pub gate: &'a Gate,
    /// `rule: error`.
    pub error: String,
}

/// Everything that decides what happens to one proposed call.
#[derive(Debug)]
pub struct Facts<'a> {
    pub tool: &'a str,
    /// Whether the agent has a tool by that name.
    pub known_tool: bool,
    /// Where the arguments break the tool's schema (empty: they fit).
    pub violations: Vec<FieldProblem>,
    /// The gate that stops the call, if any ([`check`]).
    pub gate: Option<&'a Gate>,
    /// Why a human already refused this exact call in this conversation. Looked up only when
    /// [`Facts::history_matters`].
    pub refused_before: Option<String>,
    /// A standing grant for the tool in this conversation with uses left (its id). Likewise.
    pub grant: Option<GrantId>,
}

impl Facts<'_> {
    /// Whether earlier refusals and standing grants can change the verdict: only for a valid call
    /// that a gate stops. (The task driver reads them from the database only then.)
    pub fn history_matters(&self) -> bool {
        self.known_tool && self.violations.is_empty() && self.gate.is_some()
    }
}

/// What happens to a proposed call.
#[derive(Debug, PartialEq)]
pub enum Verdict<'a> {
    /// A tool the agent does not have, or arguments that break its schema: the call fails and the
    /// model is told why (`output`).
    Invalid { output: Value },
    /// A human already refused this exact call here: refused again without asking, and the model
    /// is told not to propose it again.
    RepeatRefused { output: Value },
    /// Runs without asking: no gate stops it, or the standing grant `grant` covers it.
    Run { grant: Option<GrantId> },
    /// A gate stops it: a human decides.
    Ask { gate: &'a Gate },
}

impl Verdict<'_> {
    /// The state the call is recorded in.
    pub fn call_state(&self) -> CallState {
        match self {
            Self::Invalid { .. } => CallState::Failed,
            Self::RepeatRefused { .. } => CallState::Rejected,
            Self::Run { .. } => CallState::Approved,
            Self::Ask { .. } => CallState::PendingApproval,
        }
    }
}

/// The verdict, in order of precedence: an invalid call fails; an ungated one runs; a gated one is
/// refused if a human refused it before, runs under a grant if one covers it, and otherwise asks.
pub fn classify(facts: Facts<'_>) -> Verdict<'_> {
    if !facts.known_tool {
        return Verdict::Invalid { output: json!({ "error": format!("unknown tool {}", facts.tool) }) };
    }
    if !facts.violations.is_empty() {
        return Verdict::Invalid { output: json!({ "error": "invalid arguments", "details": facts.violations }) };
    }
    let Some(gate) = facts.gate else { return Verdict::Run { grant: None } };
    if let Some(earlier) = facts.refused_before {
        // `reason` is for the model; `repeat` and `earlier_reason` let an agent tell the user.
        let reason = format!("this exact call was already rejected in this conversation ({earlier}); do not propose it again");
        return Verdict::RepeatRefused {
            output: json!({ "status": "rejected", "reason": reason, "repeat": true, "earlier_reason": earlier }),
        };
    }
    match facts.grant {
        Some(grant) => Verdict::Run { grant: Some(grant) },
        None => Verdict::Ask { gate },
    }
}

/// What a call requires: every enforcing gate that matches it, each of which must be met. The
/// order of the gates in the file changes nothing (docs/security.md, "A call's requirement").
#[derive(Clone, Debug)]
pub struct Requirement<'a> {
    /// The gates that match, ordered by name.
    pub gates: Vec<&'a Gate>,
    /// Their combination as one gate ([`combine`]): what the approval is asked with.
    pub gate: Gate,
}

impl<'a> Requirement<'a> {
    /// The requirement of one gate.
    pub fn one(gate: &'a Gate) -> Self {
        Self { gates: vec![gate], gate: gate.clone() }
    }

    fn of(mut gates: Vec<&'a Gate>) -> Option<Self> {
        gates.sort_by(|a, b| a.name.cmp(&b.name));
        gates.dedup_by(|a, b| a.name == b.name);
        let gate = combine(&gates)?;
        Some(Self { gates, gate })
    }

    /// Each gate's approvers and quorum, when several gates match and one of them names
    /// approvers (then each is a share of its own, `domain::rules::Share`); empty otherwise. A
    /// gate without approvers and with no quorum is left out: whoever decides meets it.
    pub fn shares(&self) -> Vec<(&'a str, &'a [String], u32)> {
        if self.gates.len() < 2 || self.gates.iter().all(|g| g.approvers.is_empty()) {
            return Vec::new();
        }
        let shares = self.gates.iter().map(|g| (g.name.as_str(), g.approvers.as_slice(), g.rules.quorum.max(1)));
        shares.filter(|(_, names, quorum)| !names.is_empty() || *quorum > 1).collect()
    }
}

/// Several gates as one: the strictest of each rule wins — four-eyes, a required reason, no
/// edits, a fresh sign-in (the shortest), the largest quorum, grantable only if every gate is,
/// in the chat only if every gate asks there, the earliest deadline, escalation and reminder,
/// and a timeout action that approves only if every gate's does. Its approvers are the union
/// (who may decide at all); [`Requirement::shares`] says what each gate needs of them.
pub fn combine(gates: &[&Gate]) -> Option<Gate> {
    let (first, rest) = gates.split_first()?;
    if rest.is_empty() {
        return Some((*first).clone());
    }
    let mut gate = (*first).clone();
    gate.name = gates.iter().map(|g| g.name.as_str()).collect::<Vec<_>>().join(" + ");
    gate.rule = GateRule::Any(gates.iter().map(|g| g.rule.clone()).collect());
    gate.assessment = None;
    for other in rest {
        gate.timeout = gate.timeout.min(other.timeout);
        gate.timeout_action = stricter(gate.timeout_action, other.timeout_action);
        gate.max_retries = gate.max_retries.min(other.max_retries);
        gate.in_chat &= other.in_chat;
        let (a, b) = (&mut gate.rules, &other.rules);
        a.require_reason |= b.require_reason;
        a.allow_modification &= b.allow_modification;
        a.separate_requester |= b.separate_requester;
        a.quorum = a.quorum.max(b.quorum);
        a.grantable &= b.grantable;
        a.reauthenticate_secs = match (a.reauthenticate_secs, b.reauthenticate_secs) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        gate.escalate_after = match (gate.escalate_after, other.escalate_after) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        gate.reminders = match (gate.reminders, other.reminders) {
            (Some(x), Some(y)) => Some(if y.interval < x.interval { y } else { x }),
            (x, y) => x.or(y),
        };
        if gate.escalation_target.is_none() {
            gate.escalation_target = other.escalation_target.clone();
        }
        for (into, from) in
            [(&mut gate.approvers, &other.approvers), (&mut gate.notify, &other.notify), (&mut gate.notify_to, &other.notify_to)]
        {
            for name in from {
                if !into.contains(name) {
                    into.push(name.clone());
                }
            }
        }
    }
    Some(gate)
}

/// Of two timeout actions, the one that lets less run: any that does not approve wins over
/// `approve`; then abort, reject, skip, escalate, retry, in that order.
fn stricter(a: TimeoutAction, b: TimeoutAction) -> TimeoutAction {
    use TimeoutAction::*;
    let rank = |t: TimeoutAction| match t {
        Abort => 0,
        Reject => 1,
        Skip => 2,
        Escalate => 3,
        Retry => 4,
        Approve => 5,
    };
    if rank(b) < rank(a) { b } else { a }
}

/// The requirement of the call, if a gate stops it. A `disabled` gate turns approvals off for
/// the agent.
pub fn gate_for(agent: &Agent, call: &Call<'_>) -> Option<Gate> {
    check(agent, call).requirement.map(|r| r.gate)
}

/// What the call requires (every enforcing gate that matches), also reporting rules that failed
/// to evaluate. A failed rule matches (the call waits for a human: fail-closed) unless the agent
/// is `fail_open`, when it does not match.
pub fn check<'a>(agent: &'a Agent, call: &Call<'_>) -> Gating<'a> {
    let mut rule_errors = Vec::new();
    // A question waits for its answer whatever the other gates say (even `disabled`).
    if call.tool.name == crate::tools::ask::NAME {
        let requirement = agent.gates.iter().find(|g| g.name == crate::tools::ask::GATE).map(Requirement::one);
        return Gating { requirement, shadows: Vec::new(), rule_errors };
    }
    if agent.gates.iter().any(|g| g.rule == GateRule::Disabled) {
        return Gating { requirement: None, shadows: Vec::new(), rule_errors };
    }
    let mut shadows: Vec<&Gate> = Vec::new();
    let mut matched = Vec::new();
    for gate in &agent.gates {
        if gate.shadow {
            // A shadow gate's failing rule asks no one, so it is no rule error of the call's.
            if matches(&gate.rule, agent, call, &mut Vec::new()) {
                shadows.push(gate);
            }
            continue;
        }
        let mut errors = Vec::new();
        if matches(&gate.rule, agent, call, &mut errors) {
            matched.push(gate);
        }
        rule_errors.extend(errors.into_iter().map(|error| RuleError { gate, error }));
    }
    shadows.sort_by(|a, b| a.name.cmp(&b.name));
    match Requirement::of(matched) {
        Some(requirement) => Gating { requirement: Some(requirement), shadows: Vec::new(), rule_errors },
        None => Gating { requirement: None, shadows, rule_errors },
    }
}

fn matches(rule: &GateRule, agent: &Agent, call: &Call<'_>, errors: &mut Vec<String>) -> bool {
    match rule {
        GateRule::Tools(names) => names.contains(&call.tool.name),
        GateRule::All => true,
        GateRule::Destructive => call.tool.destructive,
        GateRule::Writes => !call.tool.read_only,
        GateRule::Rule(rule) => evaluate(rule, agent, call).unwrap_or_else(|error| {
            errors.push(format!("{}: {error}", rule.source));
            !agent.fail_open
        }),
        GateRule::Any(parts) => parts.iter().any(|p| matches(p, agent, call, errors)),
        GateRule::Budget(budget) => call.spent.exceeds(budget),
        // A call the model gives no confidence for counts as unsure (fail-closed).
        GateRule::Confidence(threshold) => call.confidence.is_none_or(|c| c < *threshold),
        GateRule::Plan => call.tool.name == crate::tools::plan::NAME,
        // Holds answers, not calls (the task driver asks it directly).
        GateRule::Disabled | GateRule::FinalResponse => false,
    }
}

/// Why `gate` stops `call`, with what its rule looked at: "gate \"refunds\" matched: it lists
/// process_refund". For the card and the audit trail.
pub fn why_gated(gate: &Gate, agent: &Agent, call: &Call<'_>) -> String {
    let because = explain(&gate.rule, agent, call).unwrap_or_else(|| "its rule holds".into());
    format!("gate \"{}\" matched: {because}", gate.name)
}

/// Why the requirement stops `call`: each matching gate's [`why_gated`], joined.
pub fn why_required(requirement: &Requirement<'_>, agent: &Agent, call: &Call<'_>) -> String {
    requirement.gates.iter().map(|g| why_gated(g, agent, call)).collect::<Vec<_>>().join("; ")
}

fn explain(rule: &GateRule, agent: &Agent, call: &Call<'_>) -> Option<String> {
    let tool = &call.tool.name;
    Some(match rule {
        GateRule::Tools(_) => format!("it lists {tool}"),
        GateRule::All => "it covers every call".into(),
        GateRule::Destructive => format!("{tool} is marked destructive"),
        GateRule::Writes => format!("{tool} may change something (it is not marked read-only)"),
        GateRule::Rule(rule) => match evaluate(rule, agent, call) {
            Ok(_) => format!("its rule `{}` holds for args {} (user {})", rule.source, call.args, call.user),
            Err(error) => format!("its rule `{}` could not be checked ({error})", rule.source),
        },
        GateRule::Any(parts) => {
            return parts.iter().find(|p| matches(p, agent, call, &mut Vec::new())).and_then(|p| explain(p, agent, call));
        }
        GateRule::Budget(budget) => {
            let used = call.spent.per(budget.per);
            let cost = used.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default();
            let limits = [budget.tokens.map(|t| format!("{t} tokens")), budget.cost_usd.map(|c| format!("${c}"))];
            let limits: Vec<String> = limits.into_iter().flatten().collect();
            format!("{} tokens{cost} spent in the {}, over its budget of {}", used.tokens(), budget.per.as_str(), limits.join(" or "))
        }
        GateRule::Confidence(threshold) => match call.confidence {
            Some(c) => format!("the model is {:.0}% sure of the call, under {:.0}%", c * 100.0, threshold * 100.0),
            None => "the model did not say how sure it is of the call".into(),
        },
        GateRule::Plan => "it approves the agent's plans".into(),
        GateRule::Disabled | GateRule::FinalResponse => return None,
    })
}

/// The rule's verdict, or why it has none (a missing field, a type error, a non-boolean).
fn evaluate(rule: &Rule, agent: &Agent, call: &Call<'_>) -> Result<bool, String> {
    match run(rule, agent, call)? {
        cel::Value::Bool(b) => Ok(b),
        other => Err(format!("gave {other:?}, not a boolean")),
    }
}

/// A gate's CEL-computed assessment (`[agents.gates.assessment]`) over the tool's own: its
/// consequences and reversibility replace the tool's, its factors are added. An expression that
/// fails, or gives something else than a string it can use, is said as a factor (the decider sees
/// that the gate's view is missing) and changes nothing else.
pub fn assess(gate: &Gate, agent: &Agent, call: &Call<'_>, mut assessment: RiskAssessment) -> RiskAssessment {
    let Some(rules) = &gate.assessment else { return assessment };
    let text = |rule: &Rule| match run(rule, agent, call) {
        Ok(cel::Value::String(s)) => Ok(s.to_string()),
        Ok(other) => Err(format!("the gate's assessment {:?} gave {other:?}, not a string", rule.source)),
        Err(error) => Err(format!("the gate's assessment {:?} failed: {error}", rule.source)),
    };
    let mut problems = Vec::new();
    if let Some(rule) = &rules.consequences {
        match text(rule) {
            Ok(consequences) => assessment.consequences = consequences,
            Err(problem) => problems.push(problem),
        }
    }
    if let Some(rule) = &rules.reversibility {
        match text(rule).and_then(|r| {
            Reversibility::parse(&r).ok_or(format!("the gate's reversibility gave {r:?}, not fully, partially or irreversible"))
        }) {
            Ok(reversibility) => assessment.reversibility = reversibility,
            Err(problem) => problems.push(problem),
        }
    }
    for rule in &rules.factors {
        match text(rule) {
            Ok(factor) if factor.trim().is_empty() => {}
            Ok(factor) => assessment.factors.push(factor),
            Err(problem) => problems.push(problem),
        }
    }
    assessment.factors.extend(problems);
    assessment
}

/// CEL's standard functions, built once: building them is most of what a fresh context costs,
/// and every call is put to every rule gate (a replay, to every gate for each recorded call).
static STDLIB: std::sync::LazyLock<std::sync::Arc<cel::Env>> = std::sync::LazyLock::new(|| std::sync::Arc::new(cel::Env::stdlib()));

/// Runs a CEL expression over the call.
fn run(rule: &Rule, agent: &Agent, call: &Call<'_>) -> Result<cel::Value, String> {
    let mut context = cel::Context::with_env(STDLIB.clone());
    let args = cel::to_value(call.args).unwrap_or(cel::Value::Null);
    context.add_variable_from_value("args", args);
    context.add_variable_from_value("tool", call.tool.name.clone());
    context.add_variable_from_value("user", call.user.to_owned());
    context.add_variable_from_value("agent", agent.name.clone());
    context.add_variable_from_value("confidence", call.confidence.map_or(cel::Value::Null, cel::Value::Float));
    rule.program.execute(&context).map_err(|err| err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(known_tool: bool, valid: bool, gate: Option<&'a Gate>, refused: bool, grant: bool) -> Facts<'a> {
        Facts {
            tool: "refund",
            known_tool,
            violations: if valid { Vec::new() } else { vec![FieldProblem::new("/amount", "required")] },
            gate,
            refused_before: refused.then(|| "too much".to_owned()),
            grant: grant.then(|| "g1".into()),
        }
    }

    /// Every combination of the facts: the verdict follows the documented precedence, and history
    /// is asked for exactly when it can change the verdict.
    #[test]
    fn every_combination_of_facts_gets_the_verdict_of_the_precedence() {
        let gate = gate("money", GateRule::All);
        for known in [false, true] {
            for valid in [false, true] {
                for gated in [false, true] {
                    for refused in [false, true] {
                        for granted in [false, true] {
                            let f = facts(known, valid, gated.then_some(&gate), refused, granted);
                            assert_eq!(f.history_matters(), known && valid && gated);
                            let verdict = classify(f);
                            let expected = match () {
                                _ if !known => "invalid",
                                _ if !valid => "invalid",
                                _ if !gated => "run",
                                _ if refused => "refused",
                                _ if granted => "run under grant",
                                _ => "ask",
                            };
                            let got = match &verdict {
                                Verdict::Invalid { .. } => "invalid",
                                Verdict::Run { grant: None } => "run",
                                Verdict::Run { grant: Some(g) } => {
                                    assert_eq!(g, "g1");
                                    "run under grant"
                                }
                                Verdict::RepeatRefused { .. } => "refused",
                                Verdict::Ask { gate: g } => {
                                    assert_eq!(g.name, "money");
                                    "ask"
                                }
                            };
                            assert_eq!(got, expected, "known={known} valid={valid} gated={gated} refused={refused} granted={granted}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_verdict_says_what_the_model_is_told_and_how_the_call_is_recorded() {
        let unknown = classify(facts(false, true, None, false, false));
        assert_eq!(unknown, Verdict::Invalid { output: json!({ "error": "unknown tool refund" }) });
        assert_eq!(unknown.call_state(), CallState::Failed);
        let Verdict::Invalid { output } = classify(facts(true, false, None, false, false)) else { panic!() };
        assert_eq!((output["error"].as_str(), output["details"][0]["path"].as_str()), (Some("invalid arguments"), Some("/amount")));
        let gate = gate("g", GateRule::All);
        let refused = classify(facts(true, true, Some(&gate), true, true));
        let Verdict::RepeatRefused { output } = &refused else { panic!("{refused:?}") };
        assert_eq!(output["status"], "rejected");
        assert!(output["reason"].as_str().unwrap().contains("(too much); do not propose it again"));
        assert_eq!(refused.call_state(), CallState::Rejected);
        assert_eq!(classify(facts(true, true, Some(&gate), false, false)).call_state(), CallState::PendingApproval);
        assert_eq!(classify(facts(true, true, None, false, false)).call_state(), CallState::Approved);
    }
    use crate::agents::TimeoutAction;
    use serde_json::json;
    use std::time::Duration;

    fn spec(name: &str, destructive: bool) -> ToolSpec {
        ToolSpec { name: name.into(), description: String::new(), input_schema: json!({}), read_only: !destructive, destructive }
    }

    fn gate(name: &str, rule: GateRule) -> Gate {
        Gate::plain(name, rule, Duration::from_secs(1), TimeoutAction::Reject, Default::default())
    }

    fn agent(gates: Vec<Gate>) -> Agent {
        Agent {
            name: "a".into(),
            description: String::new(),
            system_prompt: String::new(),
            model: crate::agents::ModelConfig::Scripted,
            fail_open: false,
            tools: vec![],
            gates,
            delegates: vec![],
        }
    }

    fn check(a: &Agent, tool: &ToolSpec, args: Value, user: &str) -> Option<Gate> {
        gate_for(a, &Call { tool, args: &args, user, confidence: Some(0.9), spent: &Spent::default() })
    }

    fn rule(source: &str) -> GateRule {
        GateRule::Rule(Rule { source: source.into(), program: std::sync::Arc::new(cel::Program::compile(source).unwrap()) })
    }

    #[test]
    fn a_shadow_gate_stops_nothing_and_is_reported_only_when_no_enforcing_gate_stops_the_call() {
        let shadow = |name: &str, rule| Gate { shadow: true, ..gate(name, rule) };
        let refunds = || GateRule::Tools(["refund".to_string()].into());
        let a = agent(vec![shadow("try-refunds", refunds()), shadow("try-all", GateRule::All)]);
        let (spent, args, refund, lookup) = (Spent::default(), json!({}), spec("refund", true), spec("lookup", false));
        let gating = |a, tool| super::check(a, &Call { tool, args: &args, user: "u", confidence: None, spent: &spent });
        let g = gating(&a, &refund);
        assert!(g.requirement.is_none(), "a shadow gate stops nothing");
        assert_eq!(shadow_names(&g), ["try-all", "try-refunds"], "every shadow gate that matches, by name");
        assert_eq!(shadow_names(&gating(&a, &lookup)), ["try-all"]);
        let reversed = agent(vec![shadow("try-all", GateRule::All), shadow("try-refunds", refunds())]);
        assert_eq!(shadow_names(&gating(&reversed, &refund)), ["try-all", "try-refunds"], "the order changes nothing");
        // An enforcing gate after it still stops the call; then there is no shadow hit to record.
        let b = agent(vec![shadow("try-refunds", refunds()), gate("refunds", refunds())]);
        let g = gating(&b, &refund);
        assert_eq!((g.requirement.map(|r| r.gate.name), g.shadows.is_empty()), (Some("refunds".into()), true));
        // A shadow gate's failing rule is no rule error of the call (nobody is asked because of it).
        let c = agent(vec![shadow("broken", rule("args.amount > 100"))]);
        let g = gating(&c, &refund);
        assert!(g.rule_errors.is_empty() && g.requirement.is_none());
        assert_eq!(shadow_names(&g), ["broken"], "fail-closed: it would have asked");
    }

    fn shadow_names(gating: &Gating<'_>) -> Vec<String> {
        gating.shadows.iter().map(|g| g.name.clone()).collect()
    }

    #[test]
    fn a_tools_gate_matches_only_its_tools() {
        let a = agent(vec![gate("g", GateRule::Tools(["refund".to_string()].into()))]);
        assert_eq!(check(&a, &spec("refund", true), json!({}), "u").map(|g| g.name), Some("g".into()));
        assert!(check(&a, &spec("lookup", false), json!({}), "u").is_none());
    }

    #[test]
    fn a_destructive_gate_reads_the_tool_metadata() {
        let a = agent(vec![gate("d", GateRule::Destructive)]);
        assert!(check(&a, &spec("delete", true), json!({}), "u").is_some());
        assert!(check(&a, &spec("read", false), json!({}), "u").is_none());
    }

    #[test]
    fn every_matching_gate_applies_whatever_their_order() {
        let a = agent(vec![gate("d", GateRule::Destructive), gate("all", GateRule::All)]);
        assert_eq!(check(&a, &spec("delete", true), json!({}), "u").unwrap().name, "all + d");
        assert_eq!(check(&a, &spec("read", false), json!({}), "u").unwrap().name, "all");
        let b = agent(vec![gate("all", GateRule::All), gate("d", GateRule::Destructive)]);
        assert_eq!(check(&b, &spec("delete", true), json!({}), "u").unwrap().name, "all + d", "the order changes nothing");
    }

    /// The listed-first gate asks no one; the stricter one behind it names bob, asks four-eyes,
    /// a reason and a fresh sign-in, allows no edits, and times out sooner but approving.
    #[test]
    fn the_strictest_rule_of_every_matching_gate_wins() {
        let refunds = Gate {
            timeout_action: TimeoutAction::Approve,
            escalate_after: Some(Duration::from_secs(50)),
            ..gate("refunds", GateRule::Tools(["process_refund".to_string()].into()))
        };
        let mut big = gate("big-refunds", rule("args.amount > 100"));
        big.approvers = vec!["user:bob".into()];
        big.timeout = Duration::from_millis(500);
        big.timeout_action = TimeoutAction::Reject;
        big.rules = domain::rules::DecisionRules {
            separate_requester: true,
            require_reason: true,
            allow_modification: false,
            grantable: false,
            quorum: 2,
            reauthenticate_secs: Some(60),
        };
        let refund = spec("process_refund", true);
        for gates in [vec![refunds.clone(), big.clone()], vec![big.clone(), refunds.clone()]] {
            let a = agent(gates);
            let g = check(&a, &refund, json!({ "amount": 150 }), "alice").unwrap();
            assert_eq!(g.name, "big-refunds + refunds");
            assert_eq!((g.approvers.as_slice(), g.rules), (["user:bob".to_string()].as_slice(), big.rules));
            assert_eq!(
                (g.timeout, g.timeout_action, g.escalate_after),
                (Duration::from_millis(500), TimeoutAction::Reject, Some(Duration::from_secs(50)))
            );
            let small = check(&a, &refund, json!({ "amount": 50 }), "alice").unwrap();
            assert_eq!((small.name.as_str(), small.timeout_action), ("refunds", TimeoutAction::Approve), "only the gate that matches");
        }
        // Approve on time-out only when every gate says so; otherwise the stricter action.
        assert_eq!(stricter(TimeoutAction::Approve, TimeoutAction::Retry), TimeoutAction::Retry);
        assert_eq!(stricter(TimeoutAction::Escalate, TimeoutAction::Abort), TimeoutAction::Abort);
        assert_eq!(stricter(TimeoutAction::Approve, TimeoutAction::Approve), TimeoutAction::Approve);
    }

    /// A gate that asks in the chat cannot have four-eyes, approvers, a quorum or a fresh sign-in
    /// (agents/validate.rs refuses them); beside a gate that has them the call is asked on the card, so a
    /// requirement that asks in the chat never needs anyone but the requester's yes.
    #[test]
    fn a_call_is_asked_in_the_chat_only_when_every_gate_asks_there() {
        let chat = |name: &str| Gate { in_chat: true, ..gate(name, GateRule::Tools(["refund".to_string()].into())) };
        let mut four_eyes = gate("four-eyes", GateRule::All);
        four_eyes.rules.separate_requester = true;
        four_eyes.rules.quorum = 2;
        let refund = spec("refund", true);
        let both = check(&agent(vec![chat("chat"), four_eyes]), &refund, json!({}), "alice").unwrap();
        assert!(!both.in_chat && both.rules.separate_requester && both.rules.quorum == 2, "asked on the card, with every rule");
        let chats = check(&agent(vec![chat("a"), chat("b")]), &refund, json!({}), "alice").unwrap();
        assert!(chats.in_chat, "every gate asks in the chat");
    }

    #[test]
    fn several_gates_with_approvers_each_keep_their_share() {
        let mut finance = gate("guarded", GateRule::Tools(["process_refund".to_string()].into()));
        finance.approvers = vec!["group:finance".into()];
        let mut bob = gate("big-refunds", GateRule::All);
        bob.approvers = vec!["user:bob".into()];
        bob.rules.quorum = 2;
        let a = agent(vec![finance, bob, gate("plain", GateRule::Destructive)]);
        let (args, refund, spent) = (json!({}), spec("process_refund", true), Spent::default());
        let gating = super::check(&a, &Call { tool: &refund, args: &args, user: "u", confidence: None, spent: &spent });
        let requirement = gating.requirement.unwrap();
        let shares: Vec<(&str, Vec<String>, u32)> = requirement.shares().into_iter().map(|(g, n, q)| (g, n.to_vec(), q)).collect();
        assert_eq!(
            shares,
            [("big-refunds", vec!["user:bob".to_string()], 2), ("guarded", vec!["group:finance".into()], 1)],
            "a gate without approvers or quorum is met by whoever decides"
        );
        assert_eq!(requirement.gate.approvers, ["user:bob", "group:finance"], "the union: who may decide at all");
        let one = agent(vec![gate("plain", GateRule::All), gate("d", GateRule::Destructive)]);
        let gating = super::check(&one, &Call { tool: &refund, args: &args, user: "u", confidence: None, spent: &spent });
        assert!(gating.requirement.unwrap().shares().is_empty(), "no gate names approvers: nothing to share");
    }

    #[test]
    fn an_agent_without_gates_never_asks() {
        assert!(check(&agent(vec![]), &spec("delete", true), json!({}), "u").is_none());
    }

    #[test]
    fn a_rule_sees_tool_args_user_and_agent() {
        let a = agent(vec![gate("big", rule("tool == 'process_refund' && args.amount > 100"))]);
        let refund = spec("process_refund", true);
        assert!(check(&a, &refund, json!({ "order_id": 1, "amount": 250.5 }), "u").is_some());
        assert!(check(&a, &refund, json!({ "order_id": 1, "amount": 20 }), "u").is_none());
        let b = agent(vec![gate("eve", rule("user == 'eve' && agent == 'a'"))]);
        assert!(check(&b, &spec("x", false), json!({}), "eve").is_some());
        assert!(check(&b, &spec("x", false), json!({}), "bob").is_none());
    }

    #[test]
    fn why_a_gate_asked_names_the_gate_its_rule_and_what_the_rule_saw() {
        let (spent, refund) = (Spent::default(), spec("process_refund", true));
        let why = |g: &Gate, args: Value, confidence| {
            let a = agent(vec![g.clone()]);
            why_gated(g, &a, &Call { tool: &refund, args: &args, user: "alice", confidence, spent: &spent })
        };
        let big = gate("big", rule("args.amount > 100"));
        assert_eq!(
            why(&big, json!({ "amount": 250 }), None),
            "gate \"big\" matched: its rule `args.amount > 100` holds for args {\"amount\":250} (user alice)"
        );
        assert!(why(&big, json!({}), None).contains("could not be checked"), "a failing rule says so");
        let either = gate("either", GateRule::Any(vec![GateRule::Tools(["lookup".to_string()].into()), GateRule::Destructive]));
        assert_eq!(why(&either, json!({}), None), "gate \"either\" matched: process_refund is marked destructive", "the part that matched");
        let unsure = gate("unsure", GateRule::Confidence(0.8));
        assert_eq!(why(&unsure, json!({}), Some(0.5)), "gate \"unsure\" matched: the model is 50% sure of the call, under 80%");
    }

    #[test]
    fn a_rule_that_cannot_be_evaluated_fails_closed() {
        let a = agent(vec![gate("big", rule("args.amount > 100"))]);
        assert!(check(&a, &spec("process_refund", true), json!({ "order_id": 1 }), "u").is_some(), "missing field asks");
    }

    #[test]
    fn a_fail_open_agent_lets_a_call_through_when_its_rule_cannot_be_evaluated_and_says_so() {
        let mut a = agent(vec![gate("big", rule("args.amount > 100"))]);
        a.fail_open = true;
        let spec = spec("process_refund", true);
        let call = Call { tool: &spec, args: &json!({ "order_id": 1 }), user: "u", confidence: None, spent: &Spent::default() };
        let gating = super::check(&a, &call);
        assert!(gating.requirement.is_none());
        assert_eq!(gating.rule_errors.len(), 1);
        assert!(gating.rule_errors[0].error.starts_with("args.amount > 100: "), "{:?}", gating.rule_errors);
        assert_eq!(gating.rule_errors[0].gate.name, "big", "the gate whose rule failed");
    }

    #[test]
    fn an_any_gate_matches_when_one_part_does() {
        let a = agent(vec![gate("any", GateRule::Any(vec![GateRule::Destructive, rule("user == 'eve'")]))]);
        assert!(check(&a, &spec("read", false), json!({}), "eve").is_some());
        assert!(check(&a, &spec("delete", true), json!({}), "bob").is_some());
        assert!(check(&a, &spec("read", false), json!({}), "bob").is_none());
    }

    #[test]
    fn a_disabled_gate_turns_approvals_off() {
        let a = agent(vec![gate("all", GateRule::All), gate("off", GateRule::Disabled)]);
        assert!(check(&a, &spec("delete", true), json!({}), "u").is_none());
    }

    #[test]
    fn a_budget_gate_asks_once_the_task_or_the_conversation_has_spent_more_than_it_allows() {
        let usage = |tokens: u64, cost: Option<f64>| Usage { input_tokens: tokens, output_tokens: 0, cost_usd: cost };
        let tokens = Budget { tokens: Some(1000), cost_usd: None, per: BudgetScope::Task };
        let dollars = Budget { tokens: None, cost_usd: Some(0.05), per: BudgetScope::Conversation };
        let a = agent(vec![gate("tokens", GateRule::Budget(tokens)), gate("dollars", GateRule::Budget(dollars))]);
        let read = spec("read", false);
        let asked = |spent: Spent| {
            gate_for(&a, &Call { tool: &read, args: &json!({}), user: "u", confidence: None, spent: &spent }).map(|g| g.name)
        };
        assert_eq!(asked(Spent { task: usage(1000, None), conversation: usage(5000, None) }), None, "at the limit is not over it");
        assert_eq!(asked(Spent { task: usage(1001, None), conversation: usage(1001, None) }).as_deref(), Some("tokens"));
        let cheap = Spent { task: usage(10, Some(0.01)), conversation: usage(900, Some(0.05)) };
        assert_eq!(asked(cheap), None);
        let dear = Spent { task: usage(10, Some(0.01)), conversation: usage(900, Some(0.0501)) };
        assert_eq!(asked(dear).as_deref(), Some("dollars"), "the conversation's spend counts for per = conversation");
    }

    #[test]
    fn a_confidence_gate_asks_when_the_model_is_unsure_or_does_not_say() {
        let a = agent(vec![gate("unsure", GateRule::Confidence(0.8))]);
        let read = spec("read", false);
        let asked =
            |confidence| gate_for(&a, &Call { tool: &read, args: &json!({}), user: "u", confidence, spent: &Spent::default() }).is_some();
        assert!(!asked(Some(0.8)) && !asked(Some(0.95)));
        assert!(asked(Some(0.79)));
        assert!(asked(None), "no confidence counts as unsure");
        let b = agent(vec![gate("cel", rule("confidence != null && confidence < 0.5"))]);
        let cel =
            |confidence| gate_for(&b, &Call { tool: &read, args: &json!({}), user: "u", confidence, spent: &Spent::default() }).is_some();
        assert!(cel(Some(0.4)) && !cel(Some(0.6)));
    }

    #[test]
    fn a_gates_cel_assessment_replaces_the_tools_view_and_says_what_it_could_not_compute() {
        let mut g = gate("big", GateRule::All);
        g.assessment = Some(crate::agents::GateAssessment {
            consequences: Some(cel_rule("'Refunds $' + string(args.amount) + ' for good'")),
            reversibility: Some(cel_rule("args.amount > 100 ? 'irreversible' : 'partially'")),
            factors: vec![cel_rule("args.amount > 100 ? 'over $100' : ''"), cel_rule("args.missing.field")],
        });
        let a = agent(vec![g]);
        let refund = spec("process_refund", false);
        let base = RiskAssessment { factors: vec!["moves money".into()], consequences: "tool's words".into(), ..Default::default() };
        let args = json!({ "order_id": 1, "amount": 250 });
        let call = Call { tool: &refund, args: &args, user: "u", confidence: None, spent: &Spent::default() };
        let got = assess(&a.gates[0], &a, &call, base.clone());
        assert_eq!(got.consequences, "Refunds $250 for good");
        assert_eq!(got.reversibility, Reversibility::Irreversible);
        assert_eq!(got.factors[..2], ["moves money".to_owned(), "over $100".to_owned()]);
        assert!(got.factors[2].starts_with("the gate's assessment \"args.missing.field\" failed"), "{:?}", got.factors);
        let small = json!({ "order_id": 1, "amount": 5 });
        let got = assess(&a.gates[0], &a, &Call { args: &small, ..call }, base.clone());
        assert_eq!((got.reversibility, got.factors.len()), (Reversibility::Partially, 2), "an empty factor adds none: {:?}", got.factors);
        let mut odd = gate("odd", GateRule::All);
        odd.assessment = Some(crate::agents::GateAssessment {
            consequences: Some(cel_rule("42")),
            reversibility: Some(cel_rule("'maybe'")),
            factors: vec![],
        });
        let b = agent(vec![odd]);
        let got = assess(&b.gates[0], &b, &call, base.clone());
        assert_eq!(
            (got.consequences.as_str(), got.reversibility),
            ("tool's words", base.reversibility),
            "nothing usable, nothing replaced"
        );
        assert_eq!(got.factors.len(), 3, "both problems are said: {:?}", got.factors);
    }

    fn cel_rule(source: &str) -> Rule {
        Rule { source: source.into(), program: std::sync::Arc::new(cel::Program::compile(source).unwrap()) }
    }
}
