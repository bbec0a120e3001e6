//! What a person who writes gates should know about a valid configuration
//! (`countersign policy check`, and the start-up log): gates that may apply together and what
//! their combination requires, gates no call reaches, grants a requester could give themselves,
//! timeouts that approve, and budget gates a gateway's calls never meet. Pure: read from the
//! configuration and the tools' metadata only (docs/security.md, "A call's requirement").

use crate::{
    agents::{Agent, AgentsConfig, Gate, GateRule},
    policy::combine,
    tools::Registry,
};

/// Every warning of the configuration, each naming its agent and gate.
pub fn warnings(config: &AgentsConfig, registry: &Registry) -> Vec<String> {
    config.agents.iter().flat_map(|agent| agent_warnings(agent, registry)).collect()
}

/// Whether some gate has `reauthenticate = true` while people sign in through an identity
/// provider: then start-up reads the provider's discovery for [`fresh_sign_in_warnings`].
pub fn asks_fresh_sign_in(config: &AgentsConfig) -> bool {
    config.oidc.is_some() && config.agents.iter().any(|a| a.gates.iter().any(|g| g.rules.reauthenticate_secs.is_some()))
}

/// The gates with `reauthenticate = true` that a provider which does not list `auth_time` among
/// the claims it sends (its discovery's `claims_supported`) cannot serve: a sign-in is as fresh as
/// the ID token's `auth_time` says, and without one no sign-in is fresh enough to decide them
/// (docs/sign-in.md, "Signing in again for risky gates"). `None`: the provider does not say.
pub fn fresh_sign_in_warnings(config: &AgentsConfig, claims_supported: Option<&[String]>) -> Vec<String> {
    let Some(claims) = claims_supported else { return Vec::new() };
    if config.oidc.is_none() || claims.iter().any(|c| c == "auth_time") {
        return Vec::new();
    }
    config
        .agents
        .iter()
        .flat_map(|agent| {
            agent.gates.iter().filter(|g| g.rules.reauthenticate_secs.is_some()).map(move |gate| {
                format!(
                    "agent {:?}, gate {:?}: reauthenticate needs the ID token's auth_time, which the identity provider does not list among the claims it sends (claims_supported in its discovery): if it sends none, no sign-in is fresh enough and nobody can decide the gate's calls",
                    agent.name, gate.name
                )
            })
        })
        .collect()
}

/// Whether `rule` can match a call of `tool`: `Some(true)` surely for some call, `Some(false)`
/// never, `None` depending on the call (its arguments, the model's spend or confidence) or on
/// metadata not known before an MCP server is connected.
fn may_match(rule: &GateRule, tool: &str, registry: &Registry) -> Option<bool> {
    let spec = registry.get(tool).map(|t| t.spec());
    match rule {
        GateRule::Tools(names) => Some(names.contains(tool)),
        GateRule::All => Some(true),
        GateRule::Destructive => spec.map(|s| s.destructive),
        GateRule::Writes => spec.map(|s| !s.read_only),
        GateRule::Plan => Some(tool == crate::tools::plan::NAME),
        GateRule::Rule(_) | GateRule::Budget(_) | GateRule::Confidence(_) => None,
        GateRule::Any(parts) => {
            let each: Vec<Option<bool>> = parts.iter().map(|p| may_match(p, tool, registry)).collect();
            if each.contains(&Some(true)) {
                Some(true)
            } else if each.iter().all(|m| *m == Some(false)) {
                Some(false)
            } else {
                None
            }
        }
        GateRule::FinalResponse | GateRule::Disabled => Some(false),
    }
}

fn agent_warnings(agent: &Agent, registry: &Registry) -> Vec<String> {
    let at = |gate: &Gate| format!("agent {:?}, gate {:?}", agent.name, gate.name);
    let mut out = Vec::new();
    if let Some(off) = agent.gates.iter().find(|g| g.rule == GateRule::Disabled) {
        out.push(format!("{}: turns approvals off, so no other gate of the agent asks anyone", at(off)));
        return out;
    }
    let enforcing: Vec<&Gate> = agent.gates.iter().filter(|g| !g.shadow && g.rule != GateRule::FinalResponse).collect();
    let mut tools: Vec<&str> = agent.tools.iter().map(String::as_str).collect();
    if agent.gates.iter().any(|g| g.rule == GateRule::Plan) {
        tools.push(crate::tools::plan::NAME);
    }
    // Which gates may stop each tool's calls; tools stopped by the same gates are said together.
    let mut together: Vec<(Vec<&Gate>, Vec<&str>)> = Vec::new();
    for tool in &tools {
        let gates: Vec<&Gate> = enforcing.iter().copied().filter(|g| may_match(&g.rule, tool, registry) != Some(false)).collect();
        if gates.len() < 2 {
            continue;
        }
        match together.iter_mut().find(|(g, _)| g.iter().map(|x| &x.name).eq(gates.iter().map(|x| &x.name))) {
            Some((_, ts)) => ts.push(tool),
            None => together.push((gates, vec![tool])),
        }
    }
    for (mut gates, tools) in together {
        gates.sort_by(|a, b| a.name.cmp(&b.name));
        let names: Vec<String> = gates.iter().map(|g| format!("{:?}", g.name)).collect();
        let combined = combine(&gates).expect("BUG: at least two gates");
        out.push(format!(
            "agent {:?}: gates {} may apply together to {}: then all of them apply, and a call needs {}",
            agent.name,
            names.join(" and "),
            tools.join(", "),
            needs(&gates, &combined)
        ));
    }
    for gate in &enforcing {
        if gate.rule != GateRule::Plan && tools.iter().all(|t| may_match(&gate.rule, t, registry) == Some(false)) {
            out.push(format!(
                "{}: no call of the agent's tools can reach it (its rule matches none of {})",
                at(gate),
                agent.tools.join(", ")
            ));
        }
        let rules = &gate.rules;
        if rules.grantable && !gate.approvers.is_empty() && !rules.separate_requester {
            out.push(format!(
                "{}: grantable with approvers but without separate_requester: a requester who is one of its approvers can approve their own call and allow such calls for good",
                at(gate)
            ));
        }
        if gate.timeout_action == domain::TimeoutAction::Approve {
            out.push(format!(
                "{}: timeout_action = \"approve\" runs its calls when nobody decides within {}s (unless another gate that applies says otherwise)",
                at(gate),
                gate.timeout.as_secs()
            ));
        }
        if gate.rule.budget().is_some() {
            out.push(format!(
                "{}: a budget gate never stops a call an outside client makes through a gateway (MCP, A2A, AG-UI): those calls spend no model tokens",
                at(gate)
            ));
        }
    }
    out
}

/// What the combination of `gates` asks of a call, for people: "bob (for \"big\") and anyone
/// (for \"refunds\"), four-eyes, a reason to reject, no edits, within 60s".
fn needs(gates: &[&Gate], combined: &Gate) -> String {
    let mut parts = Vec::new();
    let who: Vec<String> = gates
        .iter()
        .map(|g| {
            let names: Vec<&str> = g.approvers.iter().map(|n| n.split_once(':').map_or(n.as_str(), |(_, v)| v)).collect();
            let who = if names.is_empty() { "anyone who sees it".to_owned() } else { names.join(" or ") };
            let count = if g.rules.quorum > 1 { format!("{} of ", g.rules.quorum) } else { String::new() };
            format!("{count}{who} (for {:?})", g.name)
        })
        .collect();
    parts.push(who.join(" and "));
    let rules = &combined.rules;
    for (on, what) in [
        (rules.separate_requester, "someone other than the requester (four-eyes)"),
        (rules.require_reason, "a reason to reject"),
        (!rules.allow_modification, "no edits"),
        (!rules.grantable, "no grants"),
        (rules.reauthenticate_secs.is_some(), "a fresh sign-in"),
    ] {
        if on {
            parts.push(what.to_owned());
        }
    }
    // A gate asks in the chat only alone or beside others that do; beside one that asks on the
    // card (four-eyes, approvers, a quorum: never in the chat) its calls are decided on the card.
    let in_chat: Vec<String> = gates.iter().filter(|g| g.in_chat).map(|g| format!("{:?}", g.name)).collect();
    if !in_chat.is_empty() && !combined.in_chat {
        let asks = if in_chat.len() == 1 { "asks" } else { "ask" };
        parts.push(format!("a decision on the card, not a yes in the chat (though {} {asks} in the chat)", in_chat.join(" and ")));
    }
    parts.push(format!("a decision within {}s, then {}", combined.timeout.as_secs(), combined.timeout_action.as_str()));
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(gates: &str) -> AgentsConfig {
        let toml = format!(
            "[[agents]]\nname = \"support\"\ntools = [\"list_orders\", \"get_order\", \"cancel_order\", \"process_refund\"]\n{gates}"
        );
        AgentsConfig::parse(&toml, "test.toml", &Registry::builtin()).unwrap()
    }

    fn warned(gates: &str) -> Vec<String> {
        warnings(&config(gates), &Registry::builtin())
    }

    #[test]
    fn overlapping_gates_are_named_with_what_their_combination_needs() {
        let w = warned(
            "[[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\ntimeout_secs = 60\n\
             [[agents.gates]]\nname = \"big-refunds\"\nkind = \"rule\"\nrule = \"args.amount > 100\"\napprovers = [\"user:bob\"]\n\
             separate_requester = true\ntimeout_secs = 30\n",
        );
        let overlap = w.iter().find(|w| w.contains("may apply together")).expect("an overlap");
        assert!(overlap.contains("gates \"big-refunds\" and \"refunds\" may apply together to process_refund"), "{overlap}");
        assert!(overlap.contains("bob (for \"big-refunds\") and anyone who sees it (for \"refunds\")"), "{overlap}");
        assert!(overlap.contains("four-eyes") && overlap.contains("within 30s, then reject"), "{overlap}");
        // The rule may match any tool (it reads the arguments): it overlaps nothing else here.
        assert_eq!(w.iter().filter(|w| w.contains("may apply together")).count(), 1, "{w:?}");
    }

    #[test]
    fn a_chat_gate_beside_a_card_gate_is_said_to_be_decided_on_the_card() {
        let w = warned(
            "[[agents.gates]]\nname = \"refunds\"\nkind = \"tools\"\ntools = [\"process_refund\"]\nconfirm = \"chat\"\n\
             [[agents.gates]]\nname = \"big-refunds\"\nkind = \"rule\"\nrule = \"args.amount > 100\"\napprovers = [\"user:bob\"]\n\
             separate_requester = true\n",
        );
        let overlap = w.iter().find(|w| w.contains("may apply together")).expect("an overlap");
        assert!(overlap.contains("four-eyes"), "{overlap}");
        assert!(overlap.contains("a decision on the card, not a yes in the chat (though \"refunds\" asks in the chat)"), "{overlap}");
        let chats = warned(
            "[[agents.gates]]\nname = \"a\"\nkind = \"tools\"\ntools = [\"process_refund\"]\nconfirm = \"chat\"\n\
             [[agents.gates]]\nname = \"b\"\nkind = \"destructive\"\nconfirm = \"chat\"\n",
        );
        assert!(chats.iter().all(|w| !w.contains("on the card")), "both ask in the chat: {chats:?}");
    }

    #[test]
    fn unreachable_gates_self_grants_approving_timeouts_and_budgets_are_warned() {
        let w = warned(
            "[[agents.gates]]\nname = \"nothing\"\nkind = \"tools\"\ntools = [\"get_order\"]\n\
             [[agents.gates]]\nname = \"lists\"\nkind = \"any\"\nof = [{ kind = \"tools\", tools = [\"list_orders\"] }]\n\
             [[agents.gates]]\nname = \"lenient\"\nkind = \"tools\"\ntools = [\"cancel_order\"]\ntimeout_action = \"approve\"\n\
             [[agents.gates]]\nname = \"finance\"\nkind = \"tools\"\ntools = [\"process_refund\"]\napprovers = [\"group:finance\"]\ngrantable = true\n",
        );
        let has = |gate: &str, text: &str| w.iter().any(|w| w.contains(&format!("gate {gate:?}")) && w.contains(text));
        assert!(has("lenient", "timeout_action = \"approve\" runs its calls"), "{w:?}");
        assert!(has("finance", "can approve their own call"), "{w:?}");
        assert!(!has("nothing", "no call"), "a tools gate reaches its tools: {w:?}");
        let quiet = warned("[[agents.gates]]\nname = \"changes\"\nkind = \"tools\"\ntools = [\"cancel_order\", \"process_refund\"]\n");
        assert!(quiet.is_empty(), "one plain gate: nothing to say: {quiet:?}");
        let budget = warned("[[agents.gates]]\nname = \"spend\"\nkind = \"budget\"\ntoken_threshold = 1000\n");
        assert!(budget.iter().any(|w| w.contains("never stops a call an outside client makes")), "{budget:?}");
        let off = warned("[[agents.gates]]\nname = \"all\"\nkind = \"all\"\n[[agents.gates]]\nname = \"off\"\nkind = \"disabled\"\n");
        assert_eq!(off.len(), 1, "{off:?}");
        assert!(off[0].contains("turns approvals off"), "{off:?}");
    }

    #[test]
    fn a_fresh_sign_in_gate_under_a_provider_without_auth_time_is_warned() {
        let gate = "[[agents.gates]]\nname = \"cancellations\"\nkind = \"tools\"\ntools = [\"cancel_order\"]\nreauthenticate = true\n";
        let with_provider = config(&format!("{gate}[oidc]\nissuer = \"https://idp.example.com\"\nclient_id = \"countersign\"\n"));
        assert!(asks_fresh_sign_in(&with_provider));
        let listed = |claims: &[&str]| claims.iter().map(|c| (*c).to_owned()).collect::<Vec<String>>();
        let warned = fresh_sign_in_warnings(&with_provider, Some(listed(&["sub", "email"]).as_slice()));
        assert_eq!(warned.len(), 1, "{warned:?}");
        assert!(warned[0].contains("gate \"cancellations\"") && warned[0].contains("auth_time"), "{warned:?}");
        assert!(fresh_sign_in_warnings(&with_provider, Some(listed(&["sub", "auth_time"]).as_slice())).is_empty());
        assert!(fresh_sign_in_warnings(&with_provider, None).is_empty(), "a provider that does not say is not guessed at");
        let passwords_only = config(gate);
        assert!(!asks_fresh_sign_in(&passwords_only));
        assert!(fresh_sign_in_warnings(&passwords_only, Some(listed(&["sub"]).as_slice())).is_empty(), "a password login is fresh");
    }

    #[test]
    fn a_destructive_gate_on_an_agent_without_destructive_tools_reaches_nothing() {
        let toml = "[[agents]]\nname = \"reader\"\ntools = [\"list_orders\", \"get_order\"]\n[[agents.gates]]\nname = \"d\"\nkind = \"destructive\"\n";
        let config = AgentsConfig::parse(toml, "test.toml", &Registry::builtin()).unwrap();
        let w = warnings(&config, &Registry::builtin());
        assert!(w.iter().any(|w| w.contains("gate \"d\": no call of the agent's tools can reach it")), "{w:?}");
    }
}
