//! The work a server does beside answering requests (the sweeper, the delivery worker, claim
//! renewal, the audit chain, checkpoints…), each a named component with one lifecycle: started
//! through [`Background::start`], stopped together by [`Background::stop`], and its health in
//! `/readyz`. A component says how its last pass went through its [`Pulse`]; one that panicked
//! makes the process not ready, so a load balancer moves traffic to a healthy replica.

use std::{fmt::Display, future::Future, panic::AssertUnwindSafe, sync::Arc};

use futures::FutureExt;
use parking_lot::Mutex;
use tracing::Instrument;

use crate::clock::{now_ms, rfc3339};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Working, and its last pass (if it reports passes) went well.
    #[default]
    Running,
    /// Still running, but its last pass failed (it retries by itself): said, but still ready.
    Failing,
    /// It returned: its work is done (nothing it does is needed here).
    Finished,
    /// It stopped by panicking: its work is no longer done, so the process is not ready.
    Panicked,
}

/// How a component is doing, as `/readyz` shows it.
#[derive(Clone, Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Health {
    pub name: &'static str,
    pub state: State,
    /// The last failure, while failing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Failing since (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
}

#[derive(Default)]
struct Status {
    state: State,
    error: Option<String>,
    since_ms: Option<i64>,
}

/// A component's handle on its own health.
#[derive(Clone, Default)]
pub struct Pulse(Arc<Mutex<Status>>);

impl store::Heartbeat for Pulse {
    fn ok(&self) {
        Pulse::ok(self);
    }

    fn failed(&self, err: anyhow::Error) {
        Pulse::failed(self, err);
    }
}

impl Pulse {
    /// A pass went well.
    pub fn ok(&self) {
        let mut status = self.0.lock();
        if status.state == State::Failing {
            *status = Status::default();
        }
    }

    /// A pass failed (the component logs it and tries again).
    pub fn failed(&self, err: impl Display) {
        let mut status = self.0.lock();
        if status.state == State::Running {
            status.since_ms = Some(now_ms());
        }
        status.state = State::Failing;
        status.error = Some(format!("{err:#}"));
    }

    fn ended(&self, state: State) {
        self.0.lock().state = state;
    }
}

struct Component {
    name: &'static str,
    pulse: Pulse,
    task: tokio::task::AbortHandle,
}

/// The process's background components.
#[derive(Clone, Default)]
pub struct Background(Arc<Mutex<Vec<Component>>>);

impl Background {
    /// Starts `run` as the component `name`, with the pulse it reports its passes through.
    pub fn start<Fut>(&self, name: &'static str, run: impl FnOnce(Pulse) -> Fut)
    where
        Fut: Future<Output = ()> + Send + 'static,
    {
        let pulse = Pulse::default();
        let work = run(pulse.clone());
        let end = pulse.clone();
        let task = tokio::spawn(
            async move {
                let state = match AssertUnwindSafe(work).catch_unwind().await {
                    Ok(()) => State::Finished,
                    Err(_) => {
                        tracing::error!(component = name, "a background component stopped by panicking");
                        State::Panicked
                    }
                };
                end.ended(state);
            }
            .instrument(tracing::info_span!("background", component = name)),
        );
        self.0.lock().push(Component { name, pulse, task: task.abort_handle() });
    }

    pub fn report(&self) -> Vec<Health> {
        self.0
            .lock()
            .iter()
            .map(|c| {
                let status = c.pulse.0.lock();
                Health { name: c.name, state: status.state, error: status.error.clone(), since: status.since_ms.map(rfc3339) }
            })
            .collect()
    }

    /// Stops every component (at shutdown).
    pub fn stop(&self) {
        for component in self.0.lock().drain(..) {
            component.task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn settled(background: &Background) -> Vec<(&'static str, State)> {
        tokio::task::yield_now().await;
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        background.report().into_iter().map(|h| (h.name, h.state)).collect()
    }

    #[tokio::test]
    async fn each_component_reports_its_own_health_and_stop_stops_them_all() {
        let background = Background::default();
        let (tell, told) = tokio::sync::oneshot::channel::<Pulse>();
        background.start("reporting", |pulse| async move {
            tell.send(pulse).ok();
            std::future::pending::<()>().await
        });
        background.start("done", |_| async {});
        background.start("broken", |_| async { panic!("a bug") });
        let pulse = told.await.unwrap();
        pulse.failed(anyhow::anyhow!("the far end is down"));
        assert_eq!(settled(&background).await, [("reporting", State::Failing), ("done", State::Finished), ("broken", State::Panicked)]);
        assert_eq!(background.report()[0].error.as_deref(), Some("the far end is down"));
        pulse.ok();
        assert_eq!(background.report()[0].state, State::Running);
        assert!(background.report()[0].error.is_none());
        background.stop();
        assert!(background.report().is_empty());
    }
}
