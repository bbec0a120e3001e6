//! People administration: the approver groups admins manage, the delegations people set up, and
//! the accounts and groups the identity provider names at each sign-in.
//! It changes who may decide; deciding a call is `Decisions`' (engine/src/orchestrator), and the
//! task driver asks `resolve` who the approvers are when a call stops. Every change here is one
//! audited write.
//! Beside them, [`Accounts`] make and revoke a person's API tokens and tell every replica when a
//! credential ended (`credentials.rs`).

mod accounts;
mod credentials;
pub mod delegations;
pub mod groups;
pub mod identity;
pub mod resolve;
mod sign_in;

use std::collections::BTreeMap;

// Who is acting and the account types, as the server names them without the store (store/src/users.rs).
pub use crate::store::users::{Credentials, Role, TokenInfo, User};
pub use credentials::{Accounts, account_key, token_key};
pub use groups::Group;

use crate::{agents::AgentsConfig, store::Store};

/// Groups and delegations, over the store and the configuration file's `[[groups]]`.
pub struct People {
    store: Store,
    /// The configuration file's groups: read-only here, and found before the database's.
    config_groups: BTreeMap<String, Vec<String>>,
}

impl People {
    pub fn new(store: Store, agents: &AgentsConfig) -> Self {
        Self { store, config_groups: agents.groups.clone() }
    }
}
