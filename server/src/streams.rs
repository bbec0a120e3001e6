//! What every long-lived event stream goes through. A stream checks its caller only when it opens,
//! so it also ends:
//! - when the credential that opened it ends (logout, token revoked — on any replica, told by the
//!   engine's `Accounts`, engine/src/people/credentials.rs);
//! - after `COUNTERSIGN_STREAM_LIFETIME_MS`, so the client reconnects and is checked again
//!   (browsers' EventSource reconnects by itself and resumes with `Last-Event-ID`);
//!
//! and one user may hold at most `COUNTERSIGN_STREAMS_PER_USER` open streams on a process (more
//! get 429): each costs a task and a bus subscription.

use domain::UserId;
use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::{Stream, StreamExt};
use tokio::sync::broadcast::error::RecvError;

use crate::{
    auth::{Credential, CurrentUser},
    bus::Bus,
    error::ApiError,
};

#[derive(Clone, Debug)]
pub struct OpenStreams {
    per_user: Arc<Mutex<HashMap<UserId, usize>>>,
    max_per_user: usize,
    lifetime: Duration,
}

/// One open stream's place in its user's count, given back when the stream is dropped.
struct Slot {
    per_user: Arc<Mutex<HashMap<UserId, usize>>>,
    user_id: UserId,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.per_user.lock().expect("BUG: stream count lock poisoned");
        if let Some(n) = open.get_mut(&self.user_id) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.user_id);
            }
        }
    }
}

impl OpenStreams {
    pub fn new(max_per_user: usize, lifetime: Duration) -> Self {
        Self { per_user: Arc::default(), max_per_user: max_per_user.max(1), lifetime }
    }

    /// Opens a stream for `user` (429 when they hold the most allowed) and returns `events`
    /// bounded by the credential's life and the lifetime cap.
    pub fn bound<S: Stream + Send + 'static>(
        &self,
        bus: &Bus,
        user: &CurrentUser,
        credential: Option<Credential>,
        events: S,
    ) -> Result<impl Stream<Item = S::Item> + Send + use<S>, ApiError> {
        let slot = {
            let mut open = self.per_user.lock().expect("BUG: stream count lock poisoned");
            let n = open.entry(user.user.id.clone()).or_default();
            if *n >= self.max_per_user {
                return Err(ApiError::TooManyRequests {
                    message: format!("you have {} event streams open; close some tabs", self.max_per_user),
                    retry_after_secs: 5,
                });
            }
            *n += 1;
            Slot { per_user: self.per_user.clone(), user_id: user.user.id.clone() }
        };
        let mut revoked = bus.subscribe_revoked();
        let lifetime = self.lifetime;
        // The stream ends with its credential, or with its person's account (turned off).
        let account = Credential::of_user(&user.user.id).0;
        let ends = async move {
            let credential_ends = async {
                let key = credential.map(|Credential(key)| key);
                loop {
                    match revoked.recv().await {
                        Ok(ended) if ended == account || key.as_ref() == Some(&ended) => return,
                        Ok(_) => continue,
                        // Missed some: it may have been this one, so end; the client reconnects
                        // and is checked again.
                        Err(RecvError::Lagged(_)) => return,
                        Err(RecvError::Closed) => return std::future::pending().await,
                    }
                }
            };
            tokio::select! {
                () = credential_ends => {}
                () = tokio::time::sleep(lifetime) => {}
            }
        };
        Ok(events.take_until(Box::pin(ends)).map(move |item| {
            let _held = &slot;
            item
        }))
    }
}
