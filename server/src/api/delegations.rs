//! Delegations (out of office): let another person decide in your place for a period, list the
//! ones you gave or received (an admin: all), end one early. Audited; the rule is in
//! engine/src/people/delegations.rs.

use crate::error::{ApiError, ReadErrors, WriteErrors};
use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use domain::wire::{Delegation, NewDelegation};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{access, extract::ApiJson};
use crate::{auth::CurrentUser, state::AppState};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(revoke))
}

#[utoipa::path(
    get,
    path = "/api/delegations",
    operation_id = "listDelegations",
    tag = "delegations",
    summary = "Delegations you gave or received (an admin: every one), newest first",
    responses(
        (status = 200, description = "OK", body = Vec<Delegation>),
        ReadErrors,
    ),
)]
async fn list(State(state): State<AppState>, user: CurrentUser) -> Result<Json<Vec<Delegation>>, ApiError> {
    let whose = (!user.user.is_admin()).then_some(user.user.username.as_str());
    Ok(Json(state.reads.delegations(whose).await?))
}

#[utoipa::path(
    post,
    path = "/api/delegations",
    operation_id = "createDelegation",
    tag = "delegations",
    summary = "Let `to` decide in your place until `ends_at` (audited); an admin may set `from`",
    request_body = NewDelegation,
    responses(
        (status = 201, description = "Created", body = Delegation),
        WriteErrors,
    ),
)]
async fn create(
    State(state): State<AppState>,
    user: CurrentUser,
    ApiJson(body): ApiJson<NewDelegation>,
) -> Result<(StatusCode, Json<Delegation>), ApiError> {
    let row = state.people.delegate_decisions(&body, &access::actor(&user)).await?;
    Ok((StatusCode::CREATED, Json(row.to_wire())))
}

#[utoipa::path(
    post,
    path = "/api/delegations/{id}/revoke",
    operation_id = "revokeDelegation",
    tag = "delegations",
    summary = "End a delegation now (its giver, its receiver or an admin; audited)",
    params(("id" = String, Path)),
    responses(
        (status = 200, description = "Ended", body = Delegation),
        WriteErrors,
    ),
)]
async fn revoke(State(state): State<AppState>, user: CurrentUser, Path(id): Path<String>) -> Result<Json<Delegation>, ApiError> {
    Ok(Json(state.people.revoke_delegation(&id, &access::actor(&user)).await?.to_wire()))
}
