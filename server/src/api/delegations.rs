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
use engine::clock::{now_ms, rfc3339};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{access, extract::ApiJson};
use crate::{
    auth::CurrentUser,
    state::AppState,
    store::delegations::{self, DelegationRow},
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(revoke))
}

fn wire(row: DelegationRow) -> Delegation {
    Delegation {
        active: row.active_at(now_ms()),
        id: row.id,
        from: row.from_user,
        to: row.to_user,
        starts_at: rfc3339(row.starts_at),
        ends_at: rfc3339(row.ends_at),
        created_by: row.created_by,
        revoked_at: row.revoked_at.map(rfc3339),
        revoked_by: row.revoked_by,
    }
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
    Ok(Json(delegations::list(&state.store, whose).await?.into_iter().map(wire).collect()))
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
    Ok((StatusCode::CREATED, Json(wire(row))))
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
    Ok(Json(wire(state.people.revoke_delegation(&id, &access::actor(&user)).await?)))
}
