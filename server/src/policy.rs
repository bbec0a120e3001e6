//! Which gate, if any, stops a proposed call. Pure: no I/O, no clock.

use serde_json::Value;

use crate::{
    agents::{Agent, Gate, GateRule, Rule},
    tools::ToolSpec,
};

/// What a gate may look at.
pub struct Call<'a> {
    pub tool: &'a ToolSpec,
    pub args: &'a Value,
    /// User name of the conversation's owner.
    pub user: &'a str,
}

/// What the policy decided for one call.
pub struct Gating<'a> {
    /// The gate that stops the call, if any.
    pub gate: Option<&'a Gate>,
    /// Rules that could not be evaluated for this call, as `rule: error`.
    pub rule_errors: Vec<String>,
}

/// The first of the agent's gates that matches the call, in declaration order. A `disabled`
/// gate turns approvals off for the agent.
pub fn gate_for<'a>(agent: &'a Agent, call: &Call<'_>) -> Option<&'a Gate> {
    check(agent, call).gate
}

/// Like `gate_for`, also reporting rules that failed to evaluate. A failed rule matches (the call
/// waits for a human: fail-closed) unless the agent is `fail_open`, when it does not match.
pub fn check<'a>(agent: &'a Agent, call: &Call<'_>) -> Gating<'a> {
    let mut rule_errors = Vec::new();
    if agent.gates.iter().any(|g| g.rule == GateRule::Disabled) {
        return Gating { gate: None, rule_errors };
    }
    let gate = agent.gates.iter().find(|gate| matches(&gate.rule, agent, call, &mut rule_errors));
    Gating { gate, rule_errors }
}

fn matches(rule: &GateRule, agent: &Agent, call: &Call<'_>, errors: &mut Vec<String>) -> bool {
    match rule {
        GateRule::Tools(names) => names.contains(&call.tool.name),
        GateRule::All => true,
        GateRule::Destructive => call.tool.destructive,
        GateRule::Rule(rule) => evaluate(rule, agent, call).unwrap_or_else(|error| {
            errors.push(format!("{}: {error}", rule.source));
            !agent.fail_open
        }),
        GateRule::Any(parts) => parts.iter().any(|p| matches(p, agent, call, errors)),
        GateRule::Disabled => false,
    }
}

/// The rule's verdict, or why it has none (a missing field, a type error, a non-boolean).
fn evaluate(rule: &Rule, agent: &Agent, call: &Call<'_>) -> Result<bool, String> {
    let mut context = cel::Context::default();
    let args = cel::to_value(call.args).unwrap_or(cel::Value::Null);
    context.add_variable_from_value("args", args);
    context.add_variable_from_value("tool", call.tool.name.clone());
    context.add_variable_from_value("user", call.user.to_owned());
    context.add_variable_from_value("agent", agent.name.clone());
    match rule.program.execute(&context) {
        Ok(cel::Value::Bool(b)) => Ok(b),
        Ok(other) => Err(format!("gave {other:?}, not a boolean")),
        Err(err) => Err(err.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::TimeoutAction;
    use serde_json::json;
    use std::time::Duration;

    fn spec(name: &str, destructive: bool) -> ToolSpec {
        ToolSpec { name: name.into(), description: String::new(), input_schema: json!({}), read_only: !destructive, destructive }
    }

    fn gate(name: &str, rule: GateRule) -> Gate {
        Gate { name: name.into(), rule, timeout: Duration::from_secs(1), timeout_action: TimeoutAction::Reject, in_chat: false }
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

    fn check<'a>(a: &'a Agent, tool: &ToolSpec, args: Value, user: &str) -> Option<&'a Gate> {
        gate_for(a, &Call { tool, args: &args, user })
    }

    fn rule(source: &str) -> GateRule {
        GateRule::Rule(Rule { source: source.into(), program: std::sync::Arc::new(cel::Program::compile(source).unwrap()) })
    }

    #[test]
    fn a_tools_gate_matches_only_its_tools() {
        let a = agent(vec![gate("g", GateRule::Tools(["refund".to_string()].into()))]);
        assert_eq!(check(&a, &spec("refund", true), json!({}), "u").map(|g| g.name.as_str()), Some("g"));
        assert!(check(&a, &spec("lookup", false), json!({}), "u").is_none());
    }

    #[test]
    fn a_destructive_gate_reads_the_tool_metadata() {
        let a = agent(vec![gate("d", GateRule::Destructive)]);
        assert!(check(&a, &spec("delete", true), json!({}), "u").is_some());
        assert!(check(&a, &spec("read", false), json!({}), "u").is_none());
    }

    #[test]
    fn an_all_gate_matches_everything_and_the_first_match_wins() {
        let a = agent(vec![gate("d", GateRule::Destructive), gate("all", GateRule::All)]);
        assert_eq!(check(&a, &spec("delete", true), json!({}), "u").unwrap().name, "d");
        assert_eq!(check(&a, &spec("read", false), json!({}), "u").unwrap().name, "all");
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
    fn a_rule_that_cannot_be_evaluated_fails_closed() {
        let a = agent(vec![gate("big", rule("args.amount > 100"))]);
        assert!(check(&a, &spec("process_refund", true), json!({ "order_id": 1 }), "u").is_some(), "missing field asks");
    }

    #[test]
    fn a_fail_open_agent_lets_a_call_through_when_its_rule_cannot_be_evaluated_and_says_so() {
        let mut a = agent(vec![gate("big", rule("args.amount > 100"))]);
        a.fail_open = true;
        let spec = spec("process_refund", true);
        let gating = super::check(&a, &Call { tool: &spec, args: &json!({ "order_id": 1 }), user: "u" });
        assert!(gating.gate.is_none());
        assert_eq!(gating.rule_errors.len(), 1);
        assert!(gating.rule_errors[0].starts_with("args.amount > 100: "), "{:?}", gating.rule_errors);
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
}
