//! Which gate, if any, stops a proposed call. Pure: no I/O, no clock.

use crate::{
    agents::{Agent, Gate, GateRule},
    tools::ToolSpec,
};

/// The first of the agent's gates that matches the tool, in declaration order.
pub fn gate_for<'a>(agent: &'a Agent, tool: &ToolSpec) -> Option<&'a Gate> {
    agent.gates.iter().find(|gate| match &gate.rule {
        GateRule::Tools(names) => names.contains(&tool.name),
        GateRule::All => true,
        GateRule::Destructive => tool.destructive,
    })
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
        Gate { name: name.into(), rule, timeout: Duration::from_secs(1), timeout_action: TimeoutAction::Reject }
    }

    fn agent(gates: Vec<Gate>) -> Agent {
        Agent {
            name: "a".into(),
            description: String::new(),
            system_prompt: String::new(),
            model: crate::agents::ModelConfig::Scripted,
            tools: vec![],
            gates,
        }
    }

    #[test]
    fn a_tools_gate_matches_only_its_tools() {
        let a = agent(vec![gate("g", GateRule::Tools(["refund".to_string()].into()))]);
        assert_eq!(gate_for(&a, &spec("refund", true)).map(|g| g.name.as_str()), Some("g"));
        assert!(gate_for(&a, &spec("lookup", false)).is_none());
    }

    #[test]
    fn a_destructive_gate_reads_the_tool_metadata() {
        let a = agent(vec![gate("d", GateRule::Destructive)]);
        assert!(gate_for(&a, &spec("delete", true)).is_some());
        assert!(gate_for(&a, &spec("read", false)).is_none());
    }

    #[test]
    fn an_all_gate_matches_everything_and_the_first_match_wins() {
        let a = agent(vec![gate("d", GateRule::Destructive), gate("all", GateRule::All)]);
        assert_eq!(gate_for(&a, &spec("delete", true)).unwrap().name, "d");
        assert_eq!(gate_for(&a, &spec("read", false)).unwrap().name, "all");
    }

    #[test]
    fn an_agent_without_gates_never_asks() {
        assert!(gate_for(&agent(vec![]), &spec("delete", true)).is_none());
    }
}
