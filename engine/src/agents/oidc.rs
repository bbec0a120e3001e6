//! `[oidc]`: the configuration file's section for signing in through the organisation's OpenID
//! Connect provider, as serde reads it, and the checks that need no provider (docs/sign-in.md).
//! people/identity.rs reads a person's claims by these rules; server/src/auth/oidc/provider.rs
//! talks to the provider.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::approver_names::valid_target;

/// `[oidc]`: log in with an OpenID Connect provider (Okta, Entra ID, Google, Keycloak, …).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OidcConfig {
    /// Shown on the login page: "Sign in with <name>".
    #[serde(default = "default_name")]
    pub name: String,
    /// The issuer URL; its discovery document is at `<issuer>/.well-known/openid-configuration`.
    pub issuer: String,
    pub client_id: String,
    /// The environment variable holding the client secret (never the secret itself).
    #[serde(default = "default_secret_env")]
    pub client_secret_env: String,
    /// Scopes asked for besides `openid`.
    #[serde(default = "default_scopes")]
    pub scopes: Vec<String>,
    /// The claim that becomes the user name.
    #[serde(default = "default_username_claim")]
    pub username_claim: String,
    /// The claim with the email address (notifications and Slack find people by it).
    #[serde(default = "default_email_claim")]
    pub email_claim: String,
    /// The claim with the person's group names (a list of strings).
    #[serde(default = "default_groups_claim")]
    pub groups_claim: String,
    /// Members of any of these provider groups are admins; everyone else is a user.
    #[serde(default)]
    pub admin_groups: Vec<String>,
    /// Only members of these provider groups (or of `admin_groups`) may sign in; empty: anyone
    /// the provider lets through.
    #[serde(default)]
    pub allowed_groups: Vec<String>,
    /// Only people whose verified email address is at one of these domains may sign in (Google
    /// Workspace: the organisation's domain); empty: any.
    #[serde(default)]
    pub allowed_domains: Vec<String>,
    /// Provider groups whose name starts with this become approver groups, named without it
    /// (`cs-finance` → `finance`).
    pub group_prefix: Option<String>,
    /// Provider groups by name and the approver group each becomes (`"Finance Approvers" =
    /// "finance"`). With neither this nor `group_prefix`, no provider group becomes one.
    #[serde(default)]
    pub group_map: BTreeMap<String, String>,
    /// Also read the claims from the userinfo endpoint (providers that leave groups out of the
    /// ID token).
    #[serde(default)]
    pub userinfo: bool,
    /// Keep the password form (false: only a break-glass admin made with the CLI may use it).
    #[serde(default = "yes")]
    pub password_login: bool,
    /// The longest a session started through the provider lives, in seconds (default 8 h).
    #[serde(default = "eight_hours")]
    pub session_max_secs: u64,
    /// How this server authenticates at the provider's token endpoint; default: as the
    /// provider's discovery lists (docs/sign-in.md, "The token endpoint").
    pub token_endpoint_auth: Option<TokenEndpointAuth>,
}

/// `oidc.token_endpoint_auth`: how the client id (and secret) go to the token endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum TokenEndpointAuth {
    /// In an `Authorization: Basic` header.
    #[serde(rename = "client_secret_basic")]
    ClientSecretBasic,
    /// In the form body.
    #[serde(rename = "client_secret_post")]
    ClientSecretPost,
    /// A public client: the client id only; PKCE (always used) ties the code to the sign-in.
    #[serde(rename = "none")]
    Public,
}

impl TokenEndpointAuth {
    /// The name discovery and the configuration use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
            Self::Public => "none",
        }
    }
}

fn default_name() -> String {
    "your organisation".into()
}
fn default_secret_env() -> String {
    "COUNTERSIGN_OIDC_CLIENT_SECRET".into()
}
fn default_scopes() -> Vec<String> {
    vec!["profile".into(), "email".into()]
}
fn default_username_claim() -> String {
    "preferred_username".into()
}
fn default_email_claim() -> String {
    "email".into()
}
fn default_groups_claim() -> String {
    "groups".into()
}
fn yes() -> bool {
    true
}
fn eight_hours() -> u64 {
    8 * 3600
}

impl OidcConfig {
    /// Checks what can be checked without the provider; `origin` names the file.
    pub fn check(&self, origin: &str) -> anyhow::Result<()> {
        if !(self.issuer.starts_with("https://") || self.issuer.starts_with("http://")) {
            anyhow::bail!("{origin}: oidc.issuer must be an http(s) URL, got {:?}", self.issuer);
        }
        if self.client_id.trim().is_empty() {
            anyhow::bail!("{origin}: oidc.client_id is empty");
        }
        if !(10..=MAX_SESSION_SECS).contains(&self.session_max_secs) {
            anyhow::bail!("{origin}: oidc.session_max_secs must be from 10 to {MAX_SESSION_SECS} (30 days)");
        }
        for (from, to) in &self.group_map {
            if !valid_target(to) {
                anyhow::bail!("{origin}: oidc.group_map maps {from:?} to {to:?}, which is not a group name (letters, digits, . _ - @)");
            }
        }
        Ok(())
    }
}

/// The longest session a provider's sign-in may start (30 days).
pub const MAX_SESSION_SECS: u64 = 30 * 24 * 3600;

/// An `[oidc]` section for tests: admins by a group, a group prefix and one mapped group.
#[cfg(test)]
pub fn example_config() -> OidcConfig {
    toml::from_str(
        r#"
        issuer = "https://idp.example.com"
        client_id = "countersign"
        admin_groups = ["countersign-admins"]
        group_prefix = "cs-"
        group_map = { "Finance Approvers" = "finance" }
        "#,
    )
    .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> OidcConfig {
        example_config()
    }

    #[test]
    fn the_token_endpoint_authentication_is_one_of_three() {
        let with = |method: &str| {
            toml::from_str::<OidcConfig>(&format!("issuer = \"https://i\"\nclient_id = \"c\"\ntoken_endpoint_auth = \"{method}\""))
        };
        assert_eq!(with("client_secret_post").unwrap().token_endpoint_auth, Some(TokenEndpointAuth::ClientSecretPost));
        assert_eq!(with("none").unwrap().token_endpoint_auth.map(TokenEndpointAuth::as_str), Some("none"));
        assert!(with("private_key_jwt").unwrap_err().to_string().contains("client_secret_basic"));
        assert_eq!(config().token_endpoint_auth, None, "default: as discovery lists");
    }

    #[test]
    fn the_file_is_checked() {
        let mut c = config();
        c.issuer = "idp.example.com".into();
        assert!(c.check("f").unwrap_err().to_string().contains("oidc.issuer"));
        let mut c = config();
        c.session_max_secs = u64::MAX;
        assert!(c.check("f").unwrap_err().to_string().contains("session_max_secs"));
        let mut c = config();
        c.group_map.insert("X".into(), "not ok".into());
        assert!(c.check("f").unwrap_err().to_string().contains("group_map"));
    }
}
