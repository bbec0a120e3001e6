//! Personal API tokens: `cs_` + 32 random bytes in hex, stored as their SHA-256.

use rand::RngCore;
use sha2::{Digest, Sha256};

pub const PREFIX: &str = "cs_";

pub fn generate() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!("{PREFIX}{}", hex::encode(bytes))
}

pub fn digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_distinct_and_hash_stably() {
        let (a, b) = (generate(), generate());
        assert_ne!(a, b);
        assert!(a.starts_with(PREFIX) && a.len() == 67);
        assert_eq!(digest(&a), digest(&a));
        assert_ne!(digest(&a), digest(&b));
    }
}
