//! Who a person who signed in through the organisation's identity provider is here: their user
//! name, email, role and approver groups, read from the ID token's (and userinfo's) claims by
//! the rules of `[oidc]` (docs/sign-in.md). Pure: server/src/auth/oidc.rs verifies the token,
//! `sign_in.rs` records what this says.

use std::collections::BTreeMap;

use domain::Role;
use serde::Deserialize;
use serde_json::Value;

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

/// A person as the provider describes them, in Countersign's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// `<issuer> <sub>`: stable at the provider even when the user name changes.
    pub subject: String,
    pub username: String,
    pub email: Option<String>,
    pub role: Role,
    /// The approver groups the provider puts them in (sorted, no repeats).
    pub groups: Vec<String>,
}

/// Why the claims do not describe a person we can sign in.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClaimsProblem {
    #[error("the identity provider's token has no {0:?} claim to use as the user name (set oidc.username_claim)")]
    NoUsername(String),
    #[error("the identity provider's {claim:?} claim is {value:?}, which is not a user name (1 to 64 letters, digits, . _ - or @)")]
    BadUsername { claim: String, value: String },
    #[error("the user name would be the email address {0:?}, which the identity provider has not verified")]
    UnverifiedUsername(String),
    #[error("{0} is not in a provider group that may sign in here (oidc.allowed_groups)")]
    NotInAllowedGroup(String),
    #[error("{0} has no verified email address at a domain that may sign in here (oidc.allowed_domains)")]
    NotInAllowedDomain(String),
}

impl Identity {
    /// Reads `claims` (the verified ID token's, with userinfo's over them) by `config`'s rules.
    pub fn from_claims(config: &OidcConfig, issuer: &str, sub: &str, claims: &Value) -> Result<Self, ClaimsProblem> {
        let username = match claims.get(&config.username_claim) {
            Some(Value::String(name)) => name.trim().to_owned(),
            None | Some(Value::Null) => return Err(ClaimsProblem::NoUsername(config.username_claim.clone())),
            // Named as sent, so the log says what the provider put there.
            Some(other) => return Err(ClaimsProblem::BadUsername { claim: config.username_claim.clone(), value: other.to_string() }),
        };
        if !valid_target(&username) {
            return Err(ClaimsProblem::BadUsername { claim: config.username_claim.clone(), value: username });
        }
        // An address is the person's only when the provider says so: anyone may type any address
        // at a provider that does not check it (docs/sign-in.md, "Claim shapes").
        let verified = email_verified(claims);
        if !verified && (config.username_claim == config.email_claim || config.username_claim == "email") {
            return Err(ClaimsProblem::UnverifiedUsername(username));
        }
        let email =
            claims.get(&config.email_claim).and_then(Value::as_str).map(str::trim).filter(|e| domain_of(e).is_some()).map(str::to_owned);
        let email = email.filter(|_| verified);
        let named: Vec<&str> = match claims.get(&config.groups_claim) {
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
            Some(Value::String(one)) => vec![one.as_str()],
            _ => Vec::new(),
        };
        let role = if named.iter().any(|g| config.admin_groups.iter().any(|a| a == g)) { Role::Admin } else { Role::User };
        if !config.allowed_groups.is_empty() && role != Role::Admin && !named.iter().any(|g| config.allowed_groups.iter().any(|a| a == g)) {
            return Err(ClaimsProblem::NotInAllowedGroup(username));
        }
        if !config.allowed_domains.is_empty() {
            let domain = email.as_deref().and_then(domain_of);
            if !domain.is_some_and(|d| config.allowed_domains.iter().any(|a| a.eq_ignore_ascii_case(d))) {
                return Err(ClaimsProblem::NotInAllowedDomain(username));
            }
        }
        let mut groups: Vec<String> = named.iter().filter_map(|g| approver_group(config, g)).collect();
        groups.sort_by_key(|g| g.to_lowercase());
        groups.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
        Ok(Self { subject: format!("{issuer} {sub}"), username, email, role, groups })
    }
}

/// The domain of an address with exactly one `@`. With a second one, which domain it is depends
/// on which `@` a reader takes (`m@evil.com@example.com`): such an address is none at all.
fn domain_of(address: &str) -> Option<&str> {
    let (local, domain) = address.split_once('@')?;
    (!local.is_empty() && !domain.is_empty() && !domain.contains('@')).then_some(domain)
}

/// Whether the provider says the email address is verified: `true`, or the string "true" some
/// providers send (Cognito's userinfo), in any case and with spaces around. `false`, "false",
/// anything else (`1`, "yes", `[true]`) and no claim at all are not, and never an error (Entra
/// ID sends none: its `email` is whatever its tenant set, docs/sign-in.md).
fn email_verified(claims: &Value) -> bool {
    match claims.get("email_verified") {
        Some(Value::Bool(verified)) => *verified,
        Some(Value::String(said)) => said.trim().eq_ignore_ascii_case("true"),
        _ => false,
    }
}

/// The approver group a provider group becomes, if any: the explicit map first, then the prefix.
fn approver_group(config: &OidcConfig, provider_group: &str) -> Option<String> {
    if let Some(to) = config.group_map.get(provider_group) {
        return Some(to.clone());
    }
    let rest = provider_group.strip_prefix(config.group_prefix.as_deref().filter(|p| !p.is_empty())?)?;
    if valid_target(rest) {
        Some(rest.to_owned())
    } else {
        tracing::warn!(group = %provider_group, "a provider group's name is not a group name here; left out");
        None
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn config() -> OidcConfig {
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

    #[test]
    fn groups_map_by_name_then_prefix_and_admins_by_their_groups() {
        let claims = json!({
            "preferred_username": "alice", "email": "alice@example.com", "email_verified": true,
            "groups": ["cs-refunds", "staff", "Finance Approvers", "cs-finance", "countersign-admins", "cs-bad name"]
        });
        let who = Identity::from_claims(&config(), "https://idp.example.com", "123", &claims).unwrap();
        assert_eq!(who.subject, "https://idp.example.com 123");
        assert_eq!(who.username, "alice");
        assert_eq!(who.email.as_deref(), Some("alice@example.com"));
        assert_eq!(who.role, Role::Admin);
        assert_eq!(who.groups, vec!["finance".to_owned(), "refunds".to_owned()]);
    }

    #[test]
    fn no_groups_claim_means_a_user_in_no_group() {
        let who = Identity::from_claims(&config(), "i", "s", &json!({ "preferred_username": "bob" })).unwrap();
        assert_eq!((who.role, who.groups.len(), who.email), (Role::User, 0, None));
    }

    #[test]
    fn without_a_prefix_or_map_no_provider_group_is_an_approver_group() {
        let mut config = config();
        config.group_prefix = None;
        config.group_map.clear();
        let who = Identity::from_claims(&config, "i", "s", &json!({ "preferred_username": "a", "groups": ["cs-x", "y"] })).unwrap();
        assert!(who.groups.is_empty());
    }

    #[test]
    fn an_unverified_email_is_not_kept() {
        let claims = json!({ "preferred_username": "a", "email": "a@example.com", "email_verified": false });
        assert_eq!(Identity::from_claims(&config(), "i", "s", &claims).unwrap().email, None);
    }

    #[test]
    fn a_missing_or_unusable_user_name_is_refused_saying_which_claim() {
        let missing = Identity::from_claims(&config(), "i", "s", &json!({ "email": "a@example.com" })).unwrap_err();
        assert_eq!(missing, ClaimsProblem::NoUsername("preferred_username".into()));
        assert!(missing.to_string().contains("oidc.username_claim"));
        let bad = Identity::from_claims(&config(), "i", "s", &json!({ "preferred_username": "a b" })).unwrap_err();
        assert!(matches!(bad, ClaimsProblem::BadUsername { .. }), "{bad:?}");
        let number = Identity::from_claims(&config(), "i", "s", &json!({ "preferred_username": 42 })).unwrap_err();
        assert_eq!(number, ClaimsProblem::BadUsername { claim: "preferred_username".into(), value: "42".into() });
        let null = Identity::from_claims(&config(), "i", "s", &json!({ "preferred_username": null })).unwrap_err();
        assert_eq!(null, ClaimsProblem::NoUsername("preferred_username".into()));
    }

    #[test]
    fn only_the_allowed_groups_and_domains_sign_in() {
        let mut config = config();
        config.allowed_groups = vec!["staff".into()];
        let person =
            |groups: Value| json!({ "preferred_username": "a", "email": "a@example.com", "email_verified": true, "groups": groups });
        assert!(Identity::from_claims(&config, "i", "s", &person(json!(["staff"]))).is_ok());
        assert!(Identity::from_claims(&config, "i", "s", &person(json!(["countersign-admins"]))).is_ok(), "admins always");
        let refused = Identity::from_claims(&config, "i", "s", &person(json!(["cs-finance"]))).unwrap_err();
        assert_eq!(refused, ClaimsProblem::NotInAllowedGroup("a".into()));
        config.allowed_groups.clear();
        config.allowed_domains = vec!["Example.com".into()];
        assert!(Identity::from_claims(&config, "i", "s", &person(json!([]))).is_ok());
        let elsewhere = json!({ "preferred_username": "a", "email": "a@gmail.com", "email_verified": true });
        assert_eq!(Identity::from_claims(&config, "i", "s", &elsewhere), Err(ClaimsProblem::NotInAllowedDomain("a".into())));
        let unverified = json!({ "preferred_username": "a", "email": "a@example.com", "email_verified": false });
        assert_eq!(Identity::from_claims(&config, "i", "s", &unverified), Err(ClaimsProblem::NotInAllowedDomain("a".into())));
    }

    /// An address with two `@` names no one domain: it is not kept, and no allowed domain lets it in.
    #[test]
    fn an_address_with_two_ats_is_no_address() {
        let claims = json!({ "preferred_username": "m", "email": "m@evil.com@example.com", "email_verified": true });
        assert_eq!(Identity::from_claims(&config(), "i", "s", &claims).unwrap().email, None);
        let mut by_domain = config();
        by_domain.allowed_domains = vec!["example.com".into()];
        assert_eq!(Identity::from_claims(&by_domain, "i", "s", &claims), Err(ClaimsProblem::NotInAllowedDomain("m".into())));
        assert_eq!(domain_of("m@example.com"), Some("example.com"));
        assert_eq!((domain_of("@example.com"), domain_of("m@"), domain_of("m")), (None, None, None));
    }

    #[test]
    fn an_unverified_address_is_no_user_name() {
        let mut config = config();
        config.username_claim = "email".into();
        let claims = json!({ "email": "boss@example.com", "email_verified": false });
        assert_eq!(Identity::from_claims(&config, "i", "s", &claims), Err(ClaimsProblem::UnverifiedUsername("boss@example.com".into())));
        let verified = json!({ "email": "boss@example.com", "email_verified": true });
        assert_eq!(Identity::from_claims(&config, "i", "s", &verified).unwrap().username, "boss@example.com");
    }

    /// Verified only when the provider says `true` or "true" (any case, spaces around): a string
    /// "false", no claim, or anything else is unverified for the user name, the kept email and
    /// `allowed_domains`.
    #[test]
    fn only_true_or_the_string_true_verifies_an_address() {
        let shapes = [
            (json!(true), true),
            (json!("true"), true),
            (json!("True"), true),
            (json!("TRUE"), true),
            (json!(" true "), true),
            (json!(false), false),
            (json!("false"), false),
            (json!("yes"), false),
            (json!("1"), false),
            (json!(1), false),
            (json!([true]), false),
            (json!({ "value": true }), false),
            (Value::Null, false),
        ];
        let mut by_email = config();
        by_email.username_claim = "email".into();
        let mut by_domain = config();
        by_domain.allowed_domains = vec!["example.com".into()];
        for (said, verified) in shapes {
            let mut claims = json!({ "preferred_username": "a", "email": "ceo@example.com" });
            if !said.is_null() {
                claims["email_verified"] = said.clone();
            }
            let kept = Identity::from_claims(&config(), "i", "s", &claims).unwrap().email;
            assert_eq!(kept.is_some(), verified, "email kept for {said}");
            let named = Identity::from_claims(&by_email, "i", "s", &claims);
            assert_eq!(named.is_ok(), verified, "{said}: {named:?}");
            if !verified {
                assert_eq!(named, Err(ClaimsProblem::UnverifiedUsername("ceo@example.com".into())));
            }
            let allowed = Identity::from_claims(&by_domain, "i", "s", &claims);
            assert_eq!(allowed.is_ok(), verified, "{said}: {allowed:?}");
        }
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
