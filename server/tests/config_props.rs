//! Property tests for the agent configuration and gate parser: any input gives a configuration
//! that keeps its invariants or an error naming the file, never a panic.

use countersign::{
    agents::{AgentsConfig, GateRule},
    tools::Registry,
};
use proptest::prelude::*;

fn tool() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("get_order".to_owned()),
        Just("process_refund".to_owned()),
        Just("cancel_order".to_owned()),
        Just("list_orders".to_owned()),
        Just("no_such_tool".to_owned()),
    ]
}

fn gate() -> impl Strategy<Value = String> {
    let kind = prop_oneof![Just("tools"), Just("all"), Just("destructive"), Just("disabled"), Just("rule"), Just("any"), Just("bogus")];
    let rule = prop_oneof![
        Just("tool == \"process_refund\" && args.amount > 100"),
        Just("user == \"alice\""),
        Just("args.order_id >"),
        Just("size(args) > 0 ||"),
    ];
    (kind, prop::collection::vec(tool(), 0..3), rule, -5.0f64..100.0, prop_oneof![Just("card"), Just("chat"), Just("sms")], any::<bool>()).prop_map(
        |(kind, tools, rule, timeout, confirm, named)| {
            let tools = tools.iter().map(|t| format!("{t:?}")).collect::<Vec<_>>().join(", ");
            let name = if named { "name = \"g\"\n" } else { "" };
            format!(
                "[[agents.gates]]\n{name}kind = \"{kind}\"\ntools = [{tools}]\nrule = {rule:?}\nof = [{{ kind = \"all\" }}]\ntimeout_secs = {timeout}\nconfirm = \"{confirm}\"\n"
            )
        },
    )
}

fn agent() -> impl Strategy<Value = String> {
    (
        prop_oneof![Just("a"), Just("b")],
        prop::collection::vec(tool(), 0..4),
        prop::collection::vec(tool(), 0..2),
        prop::collection::vec(prop_oneof![Just("a"), Just("b"), Just("c")], 0..2),
        prop::collection::vec(gate(), 0..3),
    )
        .prop_map(|(name, tools, require, delegates, gates)| {
            let list = |v: &[String]| v.iter().map(|t| format!("{t:?}")).collect::<Vec<_>>().join(", ");
            let delegates = delegates.iter().map(|d| format!("{d:?}")).collect::<Vec<_>>().join(", ");
            format!(
                "[[agents]]\nname = \"{name}\"\ntools = [{}]\nrequire_approval = [{}]\ndelegates = [{delegates}]\n{}",
                list(&tools),
                list(&require),
                gates.concat()
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn arbitrary_text_is_refused_with_the_file_named_never_a_panic(text in ".{0,200}") {
        if let Err(err) = AgentsConfig::parse(&text, "fuzz.toml", &Registry::builtin()) {
            prop_assert!(format!("{err:#}").starts_with("fuzz.toml"), "{err:#}");
        }
    }

    #[test]
    fn a_generated_configuration_is_valid_or_refused_naming_the_file(agents in prop::collection::vec(agent(), 1..3)) {
        let text = agents.concat();
        match AgentsConfig::parse(&text, "gen.toml", &Registry::builtin()) {
            Err(err) => prop_assert!(format!("{err:#}").starts_with("gen.toml"), "{err:#}"),
            Ok(config) => {
                for agent in &config.agents {
                    for gate in &agent.gates {
                        prop_assert!(!gate.name.is_empty());
                        prop_assert!(gate.timeout.as_secs_f64() > 0.0);
                        if let GateRule::Tools(tools) = &gate.rule {
                            prop_assert!(tools.iter().all(|t| agent.tools.contains(t)), "{tools:?} ⊆ {:?}", agent.tools);
                        }
                    }
                    for worker in &agent.delegates {
                        let target = config.get(worker);
                        prop_assert!(target.is_some_and(|w| w.name != agent.name && w.delegates.is_empty()));
                    }
                }
            }
        }
    }
}
