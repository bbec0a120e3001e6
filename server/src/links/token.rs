//! The token of a signed decision link: who may decide which approval how, for which arguments,
//! until when — signed with the server's link key (HMAC-SHA256), so it cannot be forged or
//! changed. It carries no secret of its own and needs no session; it works once, because the
//! approval's state machine lets it be decided once (docs/api.md, "Signed decision links").

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The key links are signed with, and the one before it (`COUNTERSIGN_LINK_KEY_PREVIOUS`), whose
/// links keep working until they expire, so a key can be rotated without breaking links already
/// sent. Each key is named by an id derived from it, carried in the link (`k`).
#[derive(Clone)]
pub struct LinkKey {
    current: Secret,
    previous: Option<Secret>,
}

#[derive(Clone)]
struct Secret {
    id: String,
    bytes: Vec<u8>,
}

impl Secret {
    fn new(secret: &str) -> Self {
        // The id says which key signed a link without revealing anything of the key.
        let id = hex::encode(Sha256::digest([b"countersign-link-key-id\n".as_slice(), secret.as_bytes()].concat()))[..8].to_owned();
        Self { id, bytes: secret.as_bytes().to_vec() }
    }
}

impl std::fmt::Debug for LinkKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LinkKey(…)")
    }
}

/// What a link does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkAction {
    Approve,
    Reject,
}

impl LinkAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::Reject => "reject",
        }
    }
}

/// What a link's token says (short keys: the token is part of a URL).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// Approval id.
    #[serde(rename = "a")]
    pub approval_id: String,
    /// Who decides with it (a user name).
    #[serde(rename = "d")]
    pub decider: String,
    #[serde(rename = "x")]
    pub action: LinkAction,
    /// [`args_hash`] of the arguments it was issued for.
    #[serde(rename = "h")]
    pub args_hash: String,
    /// Unix ms after which it no longer works.
    #[serde(rename = "e")]
    pub expires_at: i64,
    /// Names this link in the audit trail.
    #[serde(rename = "n")]
    pub link_id: String,
    /// The id of the key that signed it (set by [`LinkKey::sign`]; links from before key ids
    /// have none and are checked with the current key).
    #[serde(rename = "k", default, skip_serializing_if = "String::is_empty")]
    pub key_id: String,
}

/// Why a token is refused before anything is looked up.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("this link is not a decision link (it may have been cut off when it was copied)")]
    Malformed,
    #[error("this link was not made by this server, or it was changed")]
    Forged,
    #[error("this link expired")]
    Expired,
}

/// The first 32 hex digits of the SHA-256 of the arguments (compact JSON, as stored): a link
/// decides only the call it was made for.
pub fn args_hash(args: &serde_json::Value) -> String {
    hex::encode(Sha256::digest(args.to_string().as_bytes()))[..32].to_owned()
}

impl LinkKey {
    pub fn new(secret: &str) -> Self {
        Self { current: Secret::new(secret), previous: None }
    }

    /// With the key before this one, whose links still verify.
    pub fn with_previous(self, previous: &str) -> Self {
        Self { previous: Some(Secret::new(previous)), ..self }
    }

    fn mac(key: &Secret, payload: &[u8]) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&key.bytes).expect("BUG: HMAC takes keys of any length");
        mac.update(b"countersign-decision-link\n");
        mac.update(payload);
        mac
    }

    /// The link token for `claims`, signed with the current key (whose id it then carries).
    pub fn sign(&self, claims: &Claims) -> String {
        let claims = Claims { key_id: self.current.id.clone(), ..claims.clone() };
        let payload = serde_json::to_vec(&claims).expect("BUG: claims serialize");
        let signature = Self::mac(&self.current, &payload).finalize().into_bytes();
        format!("{}.{}", hex::encode(&payload), hex::encode(signature))
    }

    /// Seals `payload` for another use than a link (`purpose` keeps the uses apart: a value
    /// sealed for one never opens as another): `key id.payload.signature`, in hex.
    pub fn seal(&self, purpose: &str, payload: &[u8]) -> String {
        let signature = Self::mac_for(&self.current, purpose, payload).finalize().into_bytes();
        format!("{}.{}.{}", self.current.id, hex::encode(payload), hex::encode(signature))
    }

    /// The payload [`Self::seal`] sealed for `purpose` with the current or the previous key.
    pub fn open(&self, purpose: &str, sealed: &str) -> Result<Vec<u8>, TokenError> {
        let mut parts = sealed.splitn(3, '.');
        let (Some(id), Some(payload), Some(signature)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(TokenError::Malformed);
        };
        let (payload, signature) =
            (hex::decode(payload).map_err(|_| TokenError::Malformed)?, hex::decode(signature).map_err(|_| TokenError::Malformed)?);
        let key = [Some(&self.current), self.previous.as_ref()].into_iter().flatten().find(|k| k.id == id).ok_or(TokenError::Forged)?;
        Self::mac_for(key, purpose, &payload).verify_slice(&signature).map_err(|_| TokenError::Forged)?;
        Ok(payload)
    }

    fn mac_for(key: &Secret, purpose: &str, payload: &[u8]) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&key.bytes).expect("BUG: HMAC takes keys of any length");
        mac.update(b"countersign-sealed\n");
        mac.update(purpose.as_bytes());
        mac.update(b"\n");
        mac.update(payload);
        mac
    }

    pub fn verify(&self, token: &str, now: i64) -> Result<Claims, TokenError> {
        let (payload, signature) = token.split_once('.').ok_or(TokenError::Malformed)?;
        let (payload, signature) =
            (hex::decode(payload).map_err(|_| TokenError::Malformed)?, hex::decode(signature).map_err(|_| TokenError::Malformed)?);
        // Which key to check with is read before the check; a wrong id only picks a key that
        // then refuses the signature.
        let claims: Claims = serde_json::from_slice(&payload).map_err(|_| TokenError::Malformed)?;
        let key = match claims.key_id.as_str() {
            "" => &self.current,
            id if id == self.current.id => &self.current,
            id => self.previous.as_ref().filter(|p| p.id == id).ok_or(TokenError::Forged)?,
        };
        Self::mac(key, &payload).verify_slice(&signature).map_err(|_| TokenError::Forged)?;
        if claims.expires_at <= now {
            return Err(TokenError::Expired);
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> Claims {
        Claims {
            approval_id: "a1".into(),
            decider: "bob".into(),
            action: LinkAction::Approve,
            args_hash: args_hash(&serde_json::json!({ "order_id": 1001 })),
            expires_at: 2_000,
            link_id: "l1".into(),
            key_id: String::new(),
        }
    }

    #[test]
    fn a_signed_token_verifies_until_it_expires() {
        let key = LinkKey::new("k".repeat(32).as_str());
        let token = key.sign(&claims());
        let verified = key.verify(&token, 1_999).unwrap();
        assert_eq!(verified, Claims { key_id: verified.key_id.clone(), ..claims() });
        assert_eq!(verified.key_id.len(), 8, "it names the key that signed it");
        assert_eq!(key.verify(&token, 2_000), Err(TokenError::Expired));
    }

    #[test]
    fn a_rotated_key_keeps_its_links_working_only_while_it_is_the_previous_one() {
        let (old, new) = ("o".repeat(32), "n".repeat(32));
        let token = LinkKey::new(&old).sign(&claims());
        assert!(LinkKey::new(&new).with_previous(&old).verify(&token, 0).is_ok(), "during the grace period");
        assert_eq!(LinkKey::new(&new).verify(&token, 0), Err(TokenError::Forged), "after it");
        // A link that names the new key but was signed with the old one is refused.
        let rotated = LinkKey::new(&new).with_previous(&old);
        let new_id = LinkKey::new(&new).verify(&LinkKey::new(&new).sign(&claims()), 0).unwrap().key_id;
        let payload = serde_json::to_vec(&Claims { key_id: new_id, ..claims() }).unwrap();
        let (_, old_signature) = LinkKey::new(&old).sign(&claims()).split_once('.').map(|(a, b)| (a.to_owned(), b.to_owned())).unwrap();
        let lying = format!("{}.{old_signature}", hex::encode(payload));
        assert_eq!(rotated.verify(&lying, 0), Err(TokenError::Forged));
    }

    #[test]
    fn a_sealed_value_opens_only_for_its_purpose_and_unchanged() {
        let key = LinkKey::new("k".repeat(32).as_str());
        let sealed = key.seal("mcp-request-state", b"approval a1");
        assert_eq!(key.open("mcp-request-state", &sealed).unwrap(), b"approval a1");
        assert_eq!(key.open("another-use", &sealed), Err(TokenError::Forged));
        let (id, rest) = sealed.split_once('.').unwrap();
        let (_, signature) = rest.split_once('.').unwrap();
        let changed = format!("{id}.{}.{signature}", hex::encode(b"approval a2"));
        assert_eq!(key.open("mcp-request-state", &changed), Err(TokenError::Forged));
        assert_eq!(key.open("mcp-request-state", "nonsense"), Err(TokenError::Malformed));
        let rotated = LinkKey::new("n".repeat(32).as_str()).with_previous(&"k".repeat(32));
        assert!(rotated.open("mcp-request-state", &sealed).is_ok(), "the previous key still opens it");
        assert_eq!(LinkKey::new("n".repeat(32).as_str()).open("mcp-request-state", &sealed), Err(TokenError::Forged));
    }

    #[test]
    fn a_changed_or_foreign_token_is_refused() {
        let key = LinkKey::new("k".repeat(32).as_str());
        let token = key.sign(&claims());
        // Another key, or the same payload saying "reject", or a cut-off link.
        assert_eq!(LinkKey::new("other".repeat(8).as_str()).verify(&token, 0), Err(TokenError::Forged));
        let rejecting = Claims { action: LinkAction::Reject, ..claims() };
        let (_, signature) = token.split_once('.').unwrap();
        let tampered = format!("{}.{signature}", hex::encode(serde_json::to_vec(&rejecting).unwrap()));
        assert_eq!(key.verify(&tampered, 0), Err(TokenError::Forged));
        assert_eq!(key.verify(&token[..token.len() - 3], 0), Err(TokenError::Malformed));
        assert_eq!(key.verify("nonsense", 0), Err(TokenError::Malformed));
    }
}
