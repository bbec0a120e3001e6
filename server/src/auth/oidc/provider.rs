//! The organisation's identity provider (`Oidc`): its discovery document and keys, the client
//! made from them, the token endpoint's answer and the checks of the ID token. The routes and the
//! sign-in flow that use it: `mod.rs`. Nothing here reaches the app's state.
//!
//! The person's claims (`email_verified`, `updated_at`, …) are read here as JSON, never by the
//! library, whose typed claims refuse shapes providers send (`"True"`, `"1764403200"`): the
//! library checks a copy of the token with only the claims its checks need, and the signature
//! is checked over the token as the provider signed it (`Oidc::verify`).

use std::time::{Duration, Instant};

use anyhow::Context;
use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine as _;
use openidconnect::{
    AccessToken, AuthType, ClaimsVerificationError, ClientId, ClientSecret, DiscoveryError, EmptyAdditionalClaims, ExtraTokenFields,
    HttpClientError, HttpRequest, HttpResponse, IssuerUrl, JsonWebKey, JwsSigningAlgorithm, Nonce, OAuth2TokenResponse,
    ProviderMetadataWithLogout, RedirectUrl, RefreshToken, RequestTokenError, Scope, SignatureVerificationError, StandardErrorResponse,
    StandardTokenResponse, TokenResponse,
    core::{
        CoreAuthPrompt, CoreClientAuthMethod, CoreErrorResponseType, CoreGenderClaim, CoreIdToken, CoreIdTokenClaims, CoreIdTokenVerifier,
        CoreJsonWebKey, CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm, CoreTokenType,
    },
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::RwLock;

use crate::agents::{OidcConfig, TokenEndpointAuth};

/// How long discovery and keys are kept before they are fetched again.
const REFRESH: Duration = Duration::from_secs(600);
/// How long the provider may take to answer.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of the token endpoint's answer that is read: a few tokens, never megabytes. A larger
/// answer would be held in memory and its ID token kept in the session row.
const TOKEN_ANSWER_MAX: usize = 1024 * 1024;
/// How far ahead of this server's clock an ID token's `iat` or `auth_time` may be: clocks differ
/// a little, and no more is taken.
const CLOCK_SKEW_MS: i64 = 5 * 60 * 1000;
/// The longest `sub` taken (OpenID Connect Core: at most 255 ASCII characters).
const SUBJECT_MAX: usize = 255;

/// The configured provider, with its discovery document and keys once fetched.
pub struct Oidc {
    pub config: OidcConfig,
    secret: Option<ClientSecret>,
    redirect: RedirectUrl,
    pub(super) after_logout: String,
    pub(super) http: reqwest::Client,
    discovered: RwLock<Option<(ProviderMetadataWithLogout, Instant)>>,
}

/// What ended a sign-in, as the login page names it (`app/src/pages/login.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The provider could not be reached or answered nonsense.
    Unreachable,
    /// The provider's discovery names another issuer than `oidc.issuer` (the log names both).
    Issuer,
    /// The callback's `state` is not the one this browser was sent with, or no sign-in was under way.
    State,
    /// The provider said no (`error=` on the callback).
    Refused,
    /// The provider would not trade the code for tokens (used already, expired, wrong verifier).
    Code,
    /// The provider refused this server's client credentials at its token endpoint
    /// (`invalid_client`: the client id, the secret, or how they are sent, `token_endpoint_auth`).
    Client,
    /// The ID token failed verification (signature, issuer, audience, expiry, nonce), or the
    /// token endpoint's answer was larger than this server reads (`TOKEN_ANSWER_MAX`).
    Token,
    /// The ID token could not be read: a claim its checks read (`iss`, `aud`, `exp`, `iat`,
    /// `nonce`, `sub`, `auth_time`) in a shape this server does not read (the log says which;
    /// docs/sign-in.md, "Claim shapes"). No other claim's shape ends a sign-in. Or one of them
    /// is refused (`check_claims`): a `sub` that is blank or too long, an `azp` naming another
    /// client, an `iat` or `auth_time` ahead of this server's clock.
    Claims,
    /// The sign-in was not fresh enough for the gate that asked for one.
    Stale,
    /// The claims do not name a person we can sign in (or one allowed here), or the account name
    /// is taken.
    Account,
    /// Something failed on this server's side (its database); the details are in its log.
    Server,
}

impl Failure {
    pub(super) fn code(self) -> &'static str {
        match self {
            Self::Unreachable => "unreachable",
            Self::Issuer => "issuer",
            Self::State => "state",
            Self::Refused => "refused",
            Self::Code => "code",
            Self::Client => "client",
            Self::Token => "token",
            Self::Claims => "claims",
            Self::Stale => "stale",
            Self::Account => "account",
            Self::Server => "server",
        }
    }

    pub(super) fn page(self) -> Response {
        Redirect::to(&format!("/login?sign_in_error={}", self.code())).into_response()
    }
}

/// `[oidc]` from the configuration file, with `COUNTERSIGN_OIDC_ISSUER` and
/// `COUNTERSIGN_OIDC_CLIENT_ID` over it (both alone configure a provider with the defaults).
pub fn configured(file: Option<OidcConfig>, base_url: &str) -> anyhow::Result<Option<Oidc>> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let config = match (file, env("COUNTERSIGN_OIDC_ISSUER"), env("COUNTERSIGN_OIDC_CLIENT_ID")) {
        (Some(mut config), issuer, client_id) => {
            config.issuer = issuer.unwrap_or(config.issuer);
            config.client_id = client_id.unwrap_or(config.client_id);
            config
        }
        (None, Some(issuer), Some(client_id)) => serde_json::from_value(serde_json::json!({ "issuer": issuer, "client_id": client_id }))?,
        (None, None, None) => return Ok(None),
        (None, _, _) => anyhow::bail!("set both COUNTERSIGN_OIDC_ISSUER and COUNTERSIGN_OIDC_CLIENT_ID (or an [oidc] section)"),
    };
    config.check("[oidc]")?;
    Oidc::new(config, base_url).map(Some)
}

impl Oidc {
    /// `base_url` is where browsers reach this server; the provider sends them back to
    /// `<base_url>/auth/oidc/callback`.
    pub fn new(config: OidcConfig, base_url: &str) -> anyhow::Result<Self> {
        let secret = std::env::var(&config.client_secret_env).ok().filter(|s| !s.is_empty()).map(ClientSecret::new);
        match config.token_endpoint_auth {
            Some(method @ (TokenEndpointAuth::ClientSecretBasic | TokenEndpointAuth::ClientSecretPost)) if secret.is_none() => {
                anyhow::bail!("oidc.token_endpoint_auth = {:?} sends the client secret: set {}", method.as_str(), config.client_secret_env)
            }
            None if secret.is_none() => {
                tracing::warn!(env = %config.client_secret_env, "no OpenID Connect client secret is set: signing in as a public client");
            }
            _ => {}
        }
        let base = base_url.trim_end_matches('/');
        let redirect = RedirectUrl::new(format!("{base}/auth/oidc/callback")).context("the public URL makes no valid redirect URI")?;
        let http = reqwest::Client::builder()
            // Following a redirect here could send the client secret elsewhere.
            .redirect(reqwest::redirect::Policy::none())
            .timeout(PROVIDER_TIMEOUT)
            .build()
            .context("cannot build the OpenID Connect HTTP client")?;
        Ok(Self { config, secret, redirect, after_logout: format!("{base}/login?signed_out=1"), http, discovered: RwLock::new(None) })
    }

    /// The discovery document and keys, fetched when missing or old (or, with `fresh`, always).
    pub(super) async fn metadata(&self, fresh: bool) -> Result<ProviderMetadataWithLogout, Failure> {
        if !fresh
            && let Some((metadata, at)) = &*self.discovered.read().await
            && at.elapsed() < REFRESH
        {
            return Ok(metadata.clone());
        }
        let issuer = IssuerUrl::new(self.config.issuer.clone()).map_err(|_| Failure::Unreachable)?;
        let metadata = ProviderMetadataWithLogout::discover_async(issuer, &self.http).await.map_err(|err| match err {
            // Discovery's one check: its `issuer` is `oidc.issuer` character for character. Not
            // guessed past, not even by a trailing slash (docs/sign-in.md, "The issuer").
            DiscoveryError::Validation(problem) => self.issuer_mismatch(&problem),
            err => {
                tracing::error!(issuer = %self.config.issuer, error = %err, "the identity provider's discovery failed");
                Failure::Unreachable
            }
        })?;
        *self.discovered.write().await = Some((metadata.clone(), Instant::now()));
        Ok(metadata)
    }

    /// Says in the log what discovery's issuer is against `oidc.issuer`, and what to set when they
    /// differ only by the trailing slash.
    fn issuer_mismatch(&self, problem: &str) -> Failure {
        let configured = self.config.issuer.as_str();
        // openidconnect's message names both: "unexpected issuer URI `<discovery's>` (expected `<configured>`)".
        let stated = problem.split('`').nth(1).unwrap_or("");
        if !stated.is_empty() && stated != configured && stated.trim_end_matches('/') == configured.trim_end_matches('/') {
            tracing::error!(
                configured,
                discovery = stated,
                "oidc.issuer is {configured:?} but the identity provider's discovery says its issuer is {stated:?}: they differ only by the trailing slash; set oidc.issuer = {stated:?}, exactly as discovery states it"
            );
        } else {
            tracing::error!(configured, %problem, "the identity provider's discovery names another issuer than oidc.issuer; set oidc.issuer exactly as its discovery states it");
        }
        Failure::Issuer
    }

    /// How to authenticate at the token endpoint: `oidc.token_endpoint_auth` when set; else none
    /// without a secret, and with one `client_secret_basic` unless discovery lists only
    /// `client_secret_post` of the two (no list: basic, discovery's default).
    pub(super) fn token_auth(&self, metadata: &ProviderMetadataWithLogout) -> TokenEndpointAuth {
        if let Some(configured) = self.config.token_endpoint_auth {
            return configured;
        }
        if self.secret.is_none() {
            return TokenEndpointAuth::Public;
        }
        let listed = |wanted: fn(&CoreClientAuthMethod) -> bool| {
            metadata.token_endpoint_auth_methods_supported().is_none_or(|methods| methods.iter().any(wanted))
        };
        if !listed(|m| matches!(m, CoreClientAuthMethod::ClientSecretBasic))
            && listed(|m| matches!(m, CoreClientAuthMethod::ClientSecretPost))
        {
            TokenEndpointAuth::ClientSecretPost
        } else {
            TokenEndpointAuth::ClientSecretBasic
        }
    }

    /// The client secret sent to the token endpoint (and the key of an HMAC-signed ID token).
    fn secret_sent(&self, auth: TokenEndpointAuth) -> Option<ClientSecret> {
        // A public client sends no secret even if one is set.
        if auth == TokenEndpointAuth::Public { None } else { self.secret.clone() }
    }

    pub(super) fn client(&self, metadata: ProviderMetadataWithLogout) -> CoreClientSet {
        let auth = self.token_auth(&metadata);
        let auth_type = if auth == TokenEndpointAuth::ClientSecretBasic { AuthType::BasicAuth } else { AuthType::RequestBody };
        CoreClientSet::from_provider_metadata(metadata, ClientId::new(self.config.client_id.clone()), self.secret_sent(auth))
            .set_redirect_uri(self.redirect.clone())
            .set_auth_type(auth_type)
    }

    /// Verifies the ID token as the provider sent it (`raw`), by `metadata`'s keys: its signature
    /// over the token as signed, then (by the library, on the token with only the claims its
    /// checks read) issuer, audience, expiry and nonce. Returns those checked claims, and every
    /// claim of the token for `Identity::from_claims`, which reads them in any shape.
    pub(super) fn verify(
        &self,
        metadata: &ProviderMetadataWithLogout,
        raw: &str,
        nonce: &Nonce,
    ) -> Result<(CoreIdTokenClaims, Value), IdTokenRefusal> {
        let (token, all) = checked_token(raw).map_err(IdTokenRefusal::Shape)?;
        let client = self.client(metadata.clone());
        let verifier = client.id_token_verifier();
        // `checked_token` found the three parts.
        let (signed, signature) = raw.rsplit_once('.').unwrap_or_default();
        let secret = self.secret_sent(self.token_auth(metadata));
        check_signature(&token, signed, signature, &verifier, metadata.id_token_signing_alg_values_supported(), secret.as_ref())
            .map_err(|err| IdTokenRefusal::Check(ClaimsVerificationError::SignatureVerification(err)))?;
        // The signature is checked above, over what the provider signed: `token` carries the same
        // header and the claims the rest reads.
        let claims = token.claims(&verifier.insecure_disable_signature_check(), nonce).map_err(IdTokenRefusal::Check)?.clone();
        Ok((claims, Value::Object(all)))
    }

    /// The claims the provider's discovery says it sends (`claims_supported`), when it says.
    pub async fn claims_supported(&self) -> Result<Option<Vec<String>>, Failure> {
        let metadata = self.metadata(false).await?;
        Ok(metadata.claims_supported().map(|claims| claims.iter().map(|claim| claim.as_str().to_owned()).collect()))
    }
}

/// The client as `from_provider_metadata` makes it: authorization endpoint set, token and
/// userinfo endpoints as the provider lists them, and the token endpoint's answer read as
/// [`Tokens`].
pub(super) type CoreClientSet = openidconnect::Client<
    openidconnect::EmptyAdditionalClaims,
    openidconnect::core::CoreAuthDisplay,
    openidconnect::core::CoreGenderClaim,
    openidconnect::core::CoreJweContentEncryptionAlgorithm,
    openidconnect::core::CoreJsonWebKey,
    CoreAuthPrompt,
    openidconnect::StandardErrorResponse<openidconnect::core::CoreErrorResponseType>,
    Tokens,
    openidconnect::core::CoreTokenIntrospectionResponse,
    openidconnect::core::CoreRevocableToken,
    openidconnect::core::CoreRevocationErrorResponse,
    openidconnect::EndpointSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointMaybeSet,
    openidconnect::EndpointMaybeSet,
>;

/// The token endpoint's answer with its ID token as the provider sent it. The library would
/// decode the token's claims as it reads the answer, strictly (`email_verified: "True"` refused
/// there), though no such claim is needed to verify the token ([`Oidc::verify`]).
#[derive(Debug, Deserialize, Serialize)]
#[serde(transparent)]
pub(super) struct Tokens(StandardTokenResponse<SentIdToken, CoreTokenType>);

/// The answer's `id_token`, unread.
#[derive(Debug, Deserialize, Serialize)]
struct SentIdToken {
    id_token: Option<String>,
}

impl ExtraTokenFields for SentIdToken {}

impl Tokens {
    pub(super) fn id_token_as_sent(&self) -> Option<&str> {
        self.0.extra_fields().id_token.as_deref()
    }
}

impl OAuth2TokenResponse for Tokens {
    type TokenType = CoreTokenType;

    fn access_token(&self) -> &AccessToken {
        self.0.access_token()
    }
    fn token_type(&self) -> &CoreTokenType {
        self.0.token_type()
    }
    fn expires_in(&self) -> Option<Duration> {
        self.0.expires_in()
    }
    fn refresh_token(&self) -> Option<&RefreshToken> {
        self.0.refresh_token()
    }
    fn scopes(&self) -> Option<&Vec<Scope>> {
        self.0.scopes()
    }
}

/// The client's type asks for it; the token is read from [`Tokens::id_token_as_sent`] instead.
impl TokenResponse<EmptyAdditionalClaims, CoreGenderClaim, CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm> for Tokens {
    fn id_token(&self) -> Option<&CoreIdToken> {
        None
    }
}

/// Sends a request to the provider's token endpoint with `http`, reading at most
/// [`TOKEN_ANSWER_MAX`] of the answer (as the library's own reqwest client does, but capped).
pub(super) async fn capped(http: reqwest::Client, request: HttpRequest) -> Result<HttpResponse, HttpClientError<reqwest::Error>> {
    let request = reqwest::Request::try_from(request).map_err(Box::new)?;
    let mut response = http.execute(request).await.map_err(Box::new)?;
    if response.content_length().is_some_and(|length| length > TOKEN_ANSWER_MAX as u64) {
        return Err(too_large());
    }
    let mut answer = openidconnect::http::Response::builder().status(response.status()).version(response.version());
    for (name, value) in response.headers() {
        answer = answer.header(name, value);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(Box::new)? {
        if body.len() + chunk.len() > TOKEN_ANSWER_MAX {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    answer.body(body).map_err(HttpClientError::Http)
}

/// The one `Other` error [`capped`] gives, which [`not_traded`] names.
fn too_large() -> HttpClientError<reqwest::Error> {
    HttpClientError::Other(format!("the token endpoint's answer is larger than {TOKEN_ANSWER_MAX} bytes"))
}

/// Why the token endpoint did not trade the code, as the login page names it, with the log line
/// that says why.
pub(super) fn not_traded(
    oidc: &Oidc,
    auth: TokenEndpointAuth,
    err: RequestTokenError<HttpClientError<reqwest::Error>, StandardErrorResponse<CoreErrorResponseType>>,
) -> Failure {
    match err {
        // The provider traded the code, but its answer has a field in a shape this server cannot
        // read: not the code's fault.
        RequestTokenError::Parse(problem, body) if holds_id_token(&body) => {
            tracing::error!(%problem, "the identity provider's answer with the ID token has a field in a shape this server does not read (docs/sign-in.md, \"Claim shapes\")");
            Failure::Claims
        }
        // The client's credentials, not the person's sign-in: the configuration must change.
        RequestTokenError::ServerResponse(answer) if matches!(answer.error(), CoreErrorResponseType::InvalidClient) => {
            tracing::error!(
                client_id = %oidc.config.client_id,
                token_endpoint_auth = auth.as_str(),
                secret_env = %oidc.config.client_secret_env,
                description = answer.error_description().map(String::as_str).unwrap_or(""),
                "the identity provider refused this server's client credentials at its token endpoint (invalid_client): check oidc.client_id, the client secret and oidc.token_endpoint_auth against the client registered at the provider (docs/sign-in.md, \"The token endpoint\")"
            );
            Failure::Client
        }
        // Only `capped` says `Other`: an answer too large to read is no answer.
        RequestTokenError::Request(HttpClientError::Other(problem)) => {
            tracing::error!(%problem, "the identity provider's token endpoint answered with more than this server reads: the sign-in is refused");
            Failure::Token
        }
        err => {
            let error = with_causes(&err);
            tracing::warn!(%error, token_endpoint_auth = auth.as_str(), "the identity provider would not trade the code");
            Failure::Code
        }
    }
}

/// Whether the token endpoint's answer (as JSON) holds an ID token: then what could not be read
/// is the answer's fields, not an error answer.
fn holds_id_token(answer: &[u8]) -> bool {
    serde_json::from_slice::<Value>(answer).is_ok_and(|answer| answer.get("id_token").is_some())
}

/// Why an ID token was not taken.
pub(super) enum IdTokenRefusal {
    /// The token, or a claim its checks read ([`CHECKED`]), is in a shape this server does not read.
    Shape(String),
    /// It failed a check: signature, issuer, audience, expiry or nonce.
    Check(ClaimsVerificationError),
}

pub(super) fn refused(refusal: IdTokenRefusal) -> Failure {
    match refusal {
        IdTokenRefusal::Shape(problem) => {
            tracing::error!(%problem, "the identity provider's ID token cannot be read (docs/sign-in.md, \"Claim shapes\")");
            Failure::Claims
        }
        IdTokenRefusal::Check(err) => token_refused(err),
    }
}

fn token_refused(err: ClaimsVerificationError) -> Failure {
    let error = with_causes(&err);
    tracing::warn!(%error, "the identity provider's ID token was refused");
    Failure::Token
}

/// An error with every cause under it, on one line: the library's outer message alone ("Signature
/// verification failed") does not say which check failed or why.
fn with_causes(err: &dyn std::error::Error) -> String {
    let mut said = err.to_string();
    let mut cause = err.source();
    while let Some(inner) = cause {
        said.push_str(": ");
        said.push_str(&inner.to_string());
        cause = inner.source();
    }
    said
}

/// What the library leaves unchecked and a sign-in relies on (`all`: the ID token's claims): a
/// `sub` that names one person, an `azp` (when sent) that is this client, and times that are not
/// ahead of this server's clock (`now`). A refusal is `claims`, with the log saying why.
pub(super) fn check_claims(claims: &CoreIdTokenClaims, all: &Value, client_id: &str, now: i64) -> Result<(), Failure> {
    let checked = check_subject(claims.subject().as_str())
        .and_then(|()| check_authorized_party(all, client_id))
        .and_then(|()| not_ahead("iat", Some(claims.issue_time().timestamp_millis()), now))
        .and_then(|()| not_ahead("auth_time", claims.auth_time().map(|t| t.timestamp_millis()), now));
    checked.map_err(|problem| {
        tracing::warn!(%problem, "the identity provider's ID token was refused");
        Failure::Claims
    })
}

/// Refuses a `sub` that names no one in particular: blank (everyone the provider sends so would
/// be one account), or longer than OpenID Connect allows.
fn check_subject(sub: &str) -> Result<(), String> {
    if sub.trim().is_empty() {
        return Err(format!("its sub is {sub:?}: a blank subject would make everyone sent with it one account"));
    }
    let length = sub.chars().count();
    if length > SUBJECT_MAX {
        return Err(format!("its sub is {length} characters long, more than the {SUBJECT_MAX} OpenID Connect allows"));
    }
    Ok(())
}

/// Refuses an ID token whose authorized party (`azp`), when sent, is not this server's client: it
/// was issued to another client. The library leaves `azp` unchecked.
fn check_authorized_party(all: &Value, client_id: &str) -> Result<(), String> {
    match all.get("azp") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(azp)) if azp == client_id => Ok(()),
        Some(other) => Err(format!("its azp is {other}, not this server's client id {client_id:?}")),
    }
}

/// Refuses a time (`at`, ms) the token gives for `claim` more than [`CLOCK_SKEW_MS`] after `now`:
/// an `auth_time` ahead would make the sign-in count as fresh for as long as it is ahead.
fn not_ahead(claim: &str, at: Option<i64>, now: i64) -> Result<(), String> {
    match at {
        Some(at) if at > now.saturating_add(CLOCK_SKEW_MS) => Err(format!(
            "its {claim} is {}, ahead of this server's clock ({}) by more than the {} minutes allowed",
            time_said(at),
            time_said(now),
            CLOCK_SKEW_MS / 60_000
        )),
        _ => Ok(()),
    }
}

/// A time in ms as the log says it (RFC 3339, UTC).
fn time_said(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms).map_or_else(|| format!("{ms} ms"), |t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

/// The claims the library's checks of an ID token read: issuer, audience, expiry, issue time,
/// nonce, and the two read here as typed (`sub`, `auth_time`). The person's claims are not among
/// them: the library reads those strictly, and `Identity::from_claims` reads them from the JSON.
const CHECKED: [&str; 7] = ["iss", "aud", "exp", "iat", "nonce", "sub", "auth_time"];

/// Base64url without padding, as JWTs are written; trailing bits allowed, as the library reads them.
const B64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    base64::engine::general_purpose::NO_PAD.with_decode_allow_trailing_bits(true),
);

/// The ID token `raw` for the library's checks: its header and signature as sent, with only the
/// [`CHECKED`] claims; and every claim of the token. `Err` says what cannot be read.
fn checked_token(raw: &str) -> Result<(CoreIdToken, Map<String, Value>), String> {
    let mut parts = raw.split('.');
    let (Some(header), Some(payload), Some(signature), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err("the ID token is not a signed JWT (three parts)".into());
    };
    let all = payload_object(payload).ok_or("the ID token's payload is not a JSON object")?;
    let checked: Map<String, Value> =
        all.iter().filter(|(name, _)| CHECKED.contains(&name.as_str())).map(|(n, v)| (n.clone(), v.clone())).collect();
    let payload = B64.encode(Value::Object(checked).to_string());
    let token = format!("{header}.{payload}.{signature}")
        .parse::<CoreIdToken>()
        .map_err(|err| format!("its header or one of {} is in a shape this server does not read: {err}", CHECKED.join(", ")))?;
    Ok((token, all))
}

/// A JWT's payload part as its claims: every one, including those the library has no field for
/// (groups, the user name claim).
fn payload_object(part: &str) -> Option<Map<String, Value>> {
    let bytes = B64.decode(part.trim_end_matches('=')).ok()?;
    match serde_json::from_slice::<Value>(&bytes).ok()? {
        Value::Object(claims) => Some(claims),
        _ => None,
    }
}

/// Checks an ID token's signature over what the provider signed (`signed`: its header and
/// payload as sent), as the library checks it: an algorithm discovery lists (`algs`), then the
/// client secret as the key of an HMAC, or else the provider's key for that algorithm. `token`
/// has the same header.
fn check_signature(
    token: &CoreIdToken,
    signed: &str,
    signature: &str,
    verifier: &CoreIdTokenVerifier<'_>,
    algs: &[CoreJwsSigningAlgorithm],
    secret: Option<&ClientSecret>,
) -> Result<(), SignatureVerificationError> {
    let alg = token.signing_alg()?;
    if !algs.contains(alg) {
        return Err(SignatureVerificationError::DisallowedAlg(format!(
            "{alg:?} is not in discovery's id_token_signing_alg_values_supported"
        )));
    }
    let signature =
        B64.decode(signature).map_err(|err| SignatureVerificationError::CryptoError(format!("the signature is not base64url: {err}")))?;
    if alg.uses_shared_secret() {
        // A public client's secret is no secret: anyone could sign with it.
        let secret = secret
            .ok_or_else(|| SignatureVerificationError::DisallowedAlg("symmetric signatures are disallowed for public clients".into()))?;
        return CoreJsonWebKey::new_symmetric(secret.secret().clone().into_bytes()).verify_signature(alg, signed.as_bytes(), &signature);
    }
    token.signing_key(verifier)?.verify_signature(alg, signed.as_bytes(), &signature)
}

/// Reads the userinfo endpoint's claims over the ID token's (when `userinfo = true`); its `sub`
/// must be the token's.
pub(super) async fn merge_userinfo(
    oidc: &Oidc,
    client: &CoreClientSet,
    access_token: &str,
    subject: &str,
    all: &mut Value,
) -> Result<(), Failure> {
    let Some(url) = client.user_info_url() else { return Ok(()) };
    let info: Value =
        async { oidc.http.get(url.as_str()).bearer_auth(access_token).send().await?.error_for_status()?.json::<Value>().await }
            .await
            .map_err(|err| {
                tracing::warn!(error = %err, "the identity provider's userinfo endpoint failed");
                Failure::Unreachable
            })?;
    if info.get("sub").and_then(Value::as_str) != Some(subject) {
        tracing::warn!("userinfo answered for another subject");
        return Err(Failure::Token);
    }
    if let (Some(all), Some(info)) = (all.as_object_mut(), info.as_object()) {
        overlay_userinfo(all, info, &oidc.config.email_claim);
    }
    Ok(())
}

/// Puts userinfo's claims over the ID token's, keeping an address and whether it is verified from
/// one document: a flag is about the address beside it. When userinfo names an address
/// (`email`, or `email_claim`), `email_verified` is userinfo's; without one there, the token's
/// still holds only if the address is the token's, and else the address is unverified. When
/// userinfo names none, the token's address keeps the token's flag.
fn overlay_userinfo(all: &mut Map<String, Value>, info: &Map<String, Value>, email_claim: &str) {
    let named: Vec<&str> = ["email", email_claim].into_iter().filter(|claim| info.contains_key(*claim)).collect();
    let same_address = named.iter().all(|claim| info.get(*claim) == all.get(*claim));
    let token_says = all.get("email_verified").cloned();
    all.extend(info.iter().map(|(k, v)| (k.clone(), v.clone())));
    let verified = match (named.is_empty(), info.get("email_verified")) {
        (true, _) => token_says,
        (false, Some(said)) => Some(said.clone()),
        (false, None) => token_says.filter(|_| same_address),
    };
    if let Some(said) = verified {
        all.insert("email_verified".into(), said);
    } else {
        all.remove("email_verified");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `[oidc]` from the environment alone, over the file's, or refused when half given. (nextest
    /// runs each test in its own process, so the variables set here are seen by no other test.)
    #[test]
    fn the_environment_configures_a_provider_or_overrides_the_files() {
        let set = |name: &str, value: Option<&str>| match value {
            Some(v) => unsafe { std::env::set_var(name, v) },
            None => unsafe { std::env::remove_var(name) },
        };
        set("COUNTERSIGN_OIDC_ISSUER", None);
        set("COUNTERSIGN_OIDC_CLIENT_ID", None);
        assert!(configured(None, "http://127.0.0.1:3000").unwrap().is_none());

        set("COUNTERSIGN_OIDC_ISSUER", Some("https://idp.example.com"));
        let half = configured(None, "http://127.0.0.1:3000").err().expect("half a provider is refused").to_string();
        assert!(half.contains("COUNTERSIGN_OIDC_CLIENT_ID"), "{half}");

        set("COUNTERSIGN_OIDC_CLIENT_ID", Some("countersign"));
        let oidc = configured(None, "http://127.0.0.1:3000/").unwrap().unwrap();
        assert_eq!((oidc.config.issuer.as_str(), oidc.config.client_id.as_str()), ("https://idp.example.com", "countersign"));
        assert_eq!(oidc.redirect.as_str(), "http://127.0.0.1:3000/auth/oidc/callback");
        assert_eq!((oidc.config.session_max_secs, oidc.config.password_login), (8 * 3600, true), "the defaults");

        let file: OidcConfig =
            serde_json::from_value(serde_json::json!({ "issuer": "https://file.example.com", "client_id": "file", "name": "Okta" }))
                .unwrap();
        let over = configured(Some(file), "http://127.0.0.1:3000").unwrap().unwrap();
        assert_eq!(
            (over.config.issuer.as_str(), over.config.client_id.as_str(), over.config.name.as_str()),
            ("https://idp.example.com", "countersign", "Okta")
        );

        set("COUNTERSIGN_OIDC_ISSUER", Some("idp.example.com"));
        assert!(configured(None, "http://127.0.0.1:3000").err().unwrap().to_string().contains("oidc.issuer"));
    }

    /// A JWT part of the given claims, as a provider writes it.
    fn part(claims: &Value) -> String {
        base64::Engine::encode(&B64, claims.to_string())
    }

    #[test]
    fn a_payload_is_read_as_its_claims_object() {
        assert_eq!(
            payload_object(&part(&serde_json::json!({ "sub": "1", "groups": ["cs-a"] }))).unwrap()["groups"],
            serde_json::json!(["cs-a"])
        );
        assert!(payload_object("not base64!").is_none());
        assert!(payload_object(&part(&serde_json::json!([1]))).is_none(), "claims are an object");
    }

    /// The library refuses a token whose person's claims are in shapes it does not read; the
    /// checked token keeps the header, the signature and only the claims the checks read, and
    /// every claim stays readable beside it. A checked claim it cannot read is said.
    #[test]
    fn the_checked_token_holds_only_the_claims_the_checks_read() {
        let header = part(&serde_json::json!({ "alg": "RS256", "kid": "k" }));
        let claims = serde_json::json!({
            "iss": "https://idp.example.com", "aud": "countersign", "exp": 4102444800u64, "iat": 1764403200, "sub": "123",
            "nonce": "n", "auth_time": 1764403200, "email_verified": "True", "updated_at": "1764403200", "groups": ["cs-a"]
        });
        let raw = format!("{header}.{}.c2ln", part(&claims));
        assert!(raw.parse::<CoreIdToken>().is_err(), "the library's typed claims refuse these shapes");

        let (token, all) = checked_token(&raw).unwrap();
        assert_eq!((all["email_verified"].as_str(), all["groups"].clone()), (Some("True"), serde_json::json!(["cs-a"])));
        let sent = token.to_string();
        let parts: Vec<&str> = sent.split('.').collect();
        assert_eq!((parts[0], parts[2]), (header.as_str(), "c2ln"), "the provider's header and signature");
        let checked = payload_object(parts[1]).unwrap();
        let mut names: Vec<&str> = checked.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["aud", "auth_time", "exp", "iat", "iss", "nonce", "sub"]);

        let mut late = claims.clone();
        late["exp"] = serde_json::json!("soon");
        let problem = checked_token(&format!("{header}.{}.c2ln", part(&late))).unwrap_err();
        assert!(problem.contains("exp"), "{problem}");
        assert!(checked_token("a.b").is_err() && checked_token(&format!("{raw}.x")).is_err());
    }

    /// An address and whether it is verified come from one document: userinfo's address with
    /// userinfo's flag (none: unverified, unless it is the token's address), the token's
    /// address with the token's.
    #[test]
    fn userinfo_says_whether_its_own_address_is_verified() {
        let token = serde_json::json!({ "sub": "1", "email": "a@example.com", "email_verified": true, "groups": ["x"] });
        let merged = |info: Value| {
            let mut all = token.as_object().unwrap().clone();
            overlay_userinfo(&mut all, info.as_object().unwrap(), "email");
            all
        };
        let swapped = merged(serde_json::json!({ "sub": "1", "email": "ceo@example.com" }));
        assert_eq!(swapped["email"], "ceo@example.com");
        assert!(swapped.get("email_verified").is_none(), "another address, which userinfo does not say is verified");
        let moved = merged(serde_json::json!({ "sub": "1", "email": "b@example.com", "email_verified": "false" }));
        assert_eq!(moved["email_verified"], "false");
        let confirmed = merged(serde_json::json!({ "sub": "1", "email": "b@example.com", "email_verified": true }));
        assert_eq!(
            (confirmed["email"].clone(), confirmed["email_verified"].clone()),
            (serde_json::json!("b@example.com"), serde_json::json!(true))
        );
        let same = merged(serde_json::json!({ "sub": "1", "email": "a@example.com", "groups": ["y"] }));
        assert_eq!((same["email_verified"].clone(), same["groups"].clone()), (serde_json::json!(true), serde_json::json!(["y"])));
        let flag_only = merged(serde_json::json!({ "sub": "1", "email_verified": false }));
        assert_eq!(flag_only["email_verified"], true, "a flag beside no address says nothing about the token's");
    }

    /// The log says why a token was refused, not only the library's outer message.
    #[test]
    fn a_refusal_is_logged_with_every_cause() {
        let alg = "HS256 is not in discovery's id_token_signing_alg_values_supported";
        let err = ClaimsVerificationError::SignatureVerification(SignatureVerificationError::DisallowedAlg(alg.into()));
        assert_eq!(with_causes(&err), format!("Signature verification failed: Disallowed signature algorithm: {alg}"));
        assert_eq!(with_causes(&ClaimsVerificationError::Expired("at noon".into())), "Expired: at noon");
    }

    /// A `sub` must name one person: blank would make everyone sent with it one account.
    #[test]
    fn a_blank_or_overlong_subject_is_refused() {
        for blank in ["", " ", "\t\n"] {
            assert!(check_subject(blank).unwrap_err().contains("blank subject"), "{blank:?}");
        }
        assert_eq!(check_subject("00u1a2b3c"), Ok(()));
        assert_eq!(check_subject(&"s".repeat(SUBJECT_MAX)), Ok(()));
        assert!(check_subject(&"s".repeat(SUBJECT_MAX + 1)).unwrap_err().contains("256 characters"));
    }

    /// An `azp`, when sent, must be this client, exactly; none (or null) is fine.
    #[test]
    fn an_authorized_party_other_than_this_client_is_refused() {
        let with = |azp: Value| serde_json::json!({ "sub": "1", "azp": azp });
        assert_eq!(check_authorized_party(&serde_json::json!({ "sub": "1" }), "countersign"), Ok(()));
        assert_eq!(check_authorized_party(&with(Value::Null), "countersign"), Ok(()));
        assert_eq!(check_authorized_party(&with("countersign".into()), "countersign"), Ok(()));
        for other in [serde_json::json!("other"), serde_json::json!("Countersign"), serde_json::json!(1), serde_json::json!(["x"])] {
            let refused = check_authorized_party(&with(other.clone()), "countersign").unwrap_err();
            assert!(refused.contains("\"countersign\""), "{other}: {refused}");
        }
    }

    /// `iat` and `auth_time` may be ahead of this server's clock by the skew allowed, no more;
    /// the refusal names both times.
    #[test]
    fn a_time_ahead_of_the_clock_by_more_than_the_skew_is_refused_naming_both() {
        let now = 1_764_403_200_000;
        assert_eq!(not_ahead("auth_time", None, now), Ok(()));
        assert_eq!(not_ahead("auth_time", Some(now - 3_600_000), now), Ok(()));
        assert_eq!(not_ahead("iat", Some(now + CLOCK_SKEW_MS), now), Ok(()), "within the skew");
        let ahead = not_ahead("auth_time", Some(now + 3_600_000), now).unwrap_err();
        assert!(ahead.contains("auth_time is 2025-11-29T09:00:00Z") && ahead.contains("(2025-11-29T08:00:00Z)"), "{ahead}");
        assert!(not_ahead("iat", Some(now + CLOCK_SKEW_MS + 1), now).unwrap_err().contains("its iat"));
    }
}
