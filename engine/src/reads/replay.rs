//! The replay as the admins' Policy page asks it: a draft put to the calls recorded, and the draft
//! in shadow's hits counted. Both only read (engine/src/replay/service.rs, which the command line
//! calls too).

use domain::wire::LivePolicy;

use super::Reads;
use crate::{
    agents::AgentsConfig,
    replay::{self, Report},
};

impl Reads {
    /// Replays `draft` (a configuration's text, named `origin` in its problems) against the calls
    /// recorded in the last `window_ms` (only `agent`'s, when given), with `live` in force: an
    /// invalid draft or an unknown agent is [`crate::Error::Invalid`] ([`replay::run`]).
    pub async fn replay(
        &self,
        draft: &str,
        origin: &str,
        live: &AgentsConfig,
        window_ms: i64,
        agent: Option<&str>,
    ) -> crate::Result<Report> {
        replay::run(&self.store, draft, origin, live, window_ms, agent).await
    }

    /// `live` with its draft in shadow's hits since `started_ms` counted, if it has a draft
    /// ([`replay::count_draft_hits`]).
    pub async fn count_draft_hits(&self, live: LivePolicy, started_ms: i64) -> anyhow::Result<LivePolicy> {
        replay::count_draft_hits(&self.store, live, started_ms).await
    }
}
