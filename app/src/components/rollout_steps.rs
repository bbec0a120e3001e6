//! The end of the Policy page (app/src/pages/policy.rs): how a draft replayed there is put in
//! force, step by step, and what each step does (docs/config.md, "The policy's life").

use leptos::prelude::*;

/// The second file a draft is saved as: beside the live one (`path`), else in the working
/// directory.
pub fn second_file(path: Option<&str>) -> String {
    match path.and_then(|p| p.rsplit_once('/')) {
        Some((dir, _)) if !dir.is_empty() => format!("{dir}/agents.next.toml"),
        Some(_) => "/agents.next.toml".to_owned(),
        None => "agents.next.toml".to_owned(),
    }
}

/// The three steps from a replayed draft to the configuration in force; `path`: the live file
/// (none: the server runs the built-in demo configuration).
#[component]
pub fn RolloutSteps(path: Option<String>) -> impl IntoView {
    let next = second_file(path.as_deref());
    let live = match path {
        Some(path) => view! { "the live file, " <code>{path}</code> }.into_any(),
        None => view! { "the live configuration (the built-in demo one: no " <code>"COUNTERSIGN_AGENTS"</code> " is set)" }.into_any(),
    };
    let check = format!("countersign policy check {next}");
    let shadow_env = format!("COUNTERSIGN_AGENTS={next}");
    view! {
        <section class="rollout" aria-labelledby="rollout-title">
            <h2 id="rollout-title">"Rolling a draft out"</h2>
            <p>"A replay changes nothing. When its numbers are the ones you want, the draft goes in force in three steps, "
                {live} " staying as it is until the last:"</p>
            <ol class="rollout-steps">
                <li>
                    <strong>"Save the draft as a second file"</strong> ", " <code>{next}</code> ", and check it: "
                    <code>{check}</code> ". "
                    <span class="expect">"Expect: the warnings shown above with the report, or the first problem and exit code 1. Nothing runs differently yet."</span>
                </li>
                <li>
                    <strong>"Run it in shadow."</strong> " In the second file, give each gate the draft adds "
                    <code>"mode = \"shadow\""</code> " (a gate it changes can be tried as a shadow copy under another name) and keep "
                    "the live gates as they are: a gate the draft drops or loosens stays in force for now, since a shadow gate only tells "
                    "of calls it would stop. Restart the server (every replica) with " <code>{shadow_env}</code> ". "
                    <span class="expect">"Expect: a shadow gate stops nothing. Each call it would have stopped runs unasked and is listed "
                    "under the approval queue's Shadow hits, its card marked \"Shadow: … would have asked\" (and "
                    <code>"policy.shadow_hit"</code> " in the audit trail, " <code>"countersign_shadow_hits_total"</code>
                    " in the metrics); a call an enforcing gate asks about is asked as before. The second file is a new version: "
                    "standing grants made under the live one stop covering calls (the grants the report says would end, end now), and "
                    "approvals still pending are checked against it."</span>
                </li>
                <li>
                    <strong>"Enforce it."</strong> " When the shadow hits match what the replay predicted, remove "
                    <code>"mode = \"shadow\""</code> " so that the file is the draft replayed here, put it in the live file's place "
                    "and restart. "
                    <span class="expect">"Expect: the draft's gates ask from then on. Approvals still pending are checked against "
                    "the new version: a call its agent can still make stays pending, one whose tool is gone is canceled with the reason. "
                    "This page then shows the new version and its text, ready for the next draft."</span>
                </li>
            </ol>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::second_file;

    #[test]
    fn the_second_file_goes_beside_the_live_one() {
        assert_eq!(second_file(Some("/etc/countersign/agents.toml")), "/etc/countersign/agents.next.toml");
        assert_eq!(second_file(Some("agents.toml")), "agents.next.toml");
        assert_eq!(second_file(None), "agents.next.toml");
    }
}
