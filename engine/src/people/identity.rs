//! Who a person who signed in through the organisation's identity provider is here: their user
//! name, email, role and approver groups, read from the ID token's (and userinfo's) claims by
//! the rules of `[oidc]` (`agents::OidcConfig`, read with the configuration; docs/sign-in.md).
//! Pure: server/src/auth/oidc/ verifies the token, `sign_in.rs` records what this says.

use domain::Role;
use serde_json::Value;

use crate::{agents::OidcConfig, approver_names::valid_target};

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
        crate::agents::example_oidc_config()
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
}
